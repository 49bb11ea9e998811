// The engine's LoRA bookkeeping without a model: loads reserve room up to max_loaded, an unloaded id takes no new
// requests and is freed after its last one, ids are reused, generations tell a reused id from the one a request meant,
// and per-request scales share one index per (adapter, scale).
#include <gtest/gtest.h>

#include "core/check.h"
#include "engine/adapter_slots.h"

namespace kairo::engine {
namespace {

using State = AdapterSlots::State;

TEST(AdapterSlots, StartupAdaptersAreLoadedWithGenerationZero) {
  AdapterSlots slots({1, 2}, 0);
  EXPECT_EQ(slots.max_loaded(), 2);
  EXPECT_EQ(slots.state(1), State::Loaded);
  EXPECT_EQ(slots.state(2), State::Loaded);
  EXPECT_EQ(slots.refuse_request(0, 0), std::nullopt);
  EXPECT_EQ(slots.refuse_request(2, 0), std::nullopt);
  EXPECT_EQ(slots.refuse_request(3, 0), "LoRA adapter 3 is not loaded (2 are)");
  EXPECT_EQ(slots.refuse_request(1, 7), "LoRA adapter 1 was unloaded since this request named it; the id now holds "
                                        "another adapter");
  // max_loaded 0: as many as there are, so no load fits.
  EXPECT_EQ(slots.reserve_load(), "2 LoRA adapters are loaded, the most this server holds at once (--max-loras 2); "
                                  "unload one first, or restart with a larger --max-loras");
}

// A byte budget: startup adapters count from the start, a load reserves its bytes or is refused with what is free,
// a cancelled load gives them back, and an unloaded id's bytes are free for a new load once it is Freeing (its free
// is queued before the new load's upload) or, under a request, once that request let go of it.
TEST(AdapterSlots, LoadsReserveBytesWithinTheBudget) {
  AdapterSlots slots({1}, 4, 1000, {400});
  EXPECT_EQ(slots.max_bytes(), 1000u);
  EXPECT_EQ(slots.resident_bytes(), 400u);
  ASSERT_EQ(slots.reserve_load(), std::nullopt);
  EXPECT_EQ(slots.reserve_bytes(700, "ADVICE"),
            "this LoRA adapter takes 700 B of device memory but only 600 B of the 1000 B reserved for LoRA adapters "
            "is free (400 B held by the adapters loaded or loading); ADVICE");
  ASSERT_EQ(slots.reserve_bytes(500, "ADVICE"), std::nullopt);
  EXPECT_EQ(slots.resident_bytes(), 900u);
  ASSERT_EQ(slots.reserve_load(), std::nullopt);
  EXPECT_NE(slots.reserve_bytes(200, "ADVICE"), std::nullopt);
  slots.cancel_load();
  slots.finish_load(2, 500);
  EXPECT_EQ(slots.resident_bytes(), 900u);

  slots.acquire(2);
  ASSERT_EQ(std::get<int>(slots.unload(2, 1)), 1);  // Unloading: its bytes are still in use
  EXPECT_EQ(slots.resident_bytes(), 900u);
  ASSERT_TRUE(slots.release(2));  // Freeing: the engine frees it before any later upload
  EXPECT_EQ(slots.resident_bytes(), 400u);
  slots.freed(2);
  ASSERT_EQ(std::get<int>(slots.unload(1, 0)), 0);
  EXPECT_EQ(slots.resident_bytes(), 0u);
  ASSERT_EQ(slots.reserve_load(), std::nullopt);
  EXPECT_EQ(slots.reserve_bytes(1000, "ADVICE"), std::nullopt);
  slots.cancel_load(1000);
  EXPECT_EQ(slots.resident_bytes(), 0u);
}

TEST(AdapterSlots, LoadsReserveRoomAndGetNewGenerations) {
  AdapterSlots slots({1}, 3);
  ASSERT_EQ(slots.reserve_load(), std::nullopt);
  ASSERT_EQ(slots.reserve_load(), std::nullopt);
  EXPECT_EQ(slots.n_resident(), 3);  // two loads under way count
  EXPECT_NE(slots.reserve_load(), std::nullopt);
  slots.cancel_load();
  EXPECT_EQ(slots.n_resident(), 2);
  const uint64_t g = slots.finish_load(2);
  EXPECT_EQ(g, 1u);
  EXPECT_EQ(slots.state(2), State::Loaded);
  EXPECT_EQ(slots.refuse_request(2, g), std::nullopt);
  EXPECT_NE(slots.refuse_request(2, 0), std::nullopt);  // a request for what was at 2 before
  EXPECT_EQ(slots.n_resident(), 2);
}

TEST(AdapterSlots, UnloadWithoutRequestsFreesAtOnce) {
  AdapterSlots slots({1}, 2);
  auto n = slots.unload(1, 0);
  ASSERT_TRUE(std::holds_alternative<int>(n));
  EXPECT_EQ(std::get<int>(n), 0);
  EXPECT_EQ(slots.state(1), State::Freeing);
  EXPECT_EQ(slots.n_resident(), 0);  // the free is queued before any later load's upload
  EXPECT_EQ(slots.refuse_request(1, 0), "LoRA adapter 1 is not loaded (0 are)");
  slots.freed(1);
  EXPECT_EQ(slots.state(1), State::Free);
  EXPECT_EQ(std::get<std::string>(slots.unload(1, 0)), "LoRA adapter 1 is not loaded");
}

TEST(AdapterSlots, UnloadWhileInUseWaitsForTheLastRequest) {
  AdapterSlots slots({1, 2}, 2);
  slots.acquire(1);
  slots.acquire(1);
  slots.acquire(2);
  EXPECT_EQ(std::get<int>(slots.unload(1, 0)), 2);
  EXPECT_EQ(slots.state(1), State::Unloading);
  EXPECT_EQ(slots.refuse_request(1, 0), "LoRA adapter 1 is being unloaded: it takes no new requests");
  // Still resident: a load has no room until it is freed.
  EXPECT_NE(slots.reserve_load(), std::nullopt);
  EXPECT_FALSE(slots.release(1));
  EXPECT_FALSE(slots.release(2));  // another adapter's request: nothing to free
  EXPECT_TRUE(slots.release(1));   // the last one: free it now
  EXPECT_EQ(slots.state(1), State::Freeing);
  slots.freed(1);
  ASSERT_EQ(slots.reserve_load(), std::nullopt);
  const uint64_t g = slots.finish_load(1);  // the id is reused, with a new generation
  EXPECT_EQ(slots.state(1), State::Loaded);
  EXPECT_NE(slots.refuse_request(1, 0), std::nullopt);
  EXPECT_EQ(slots.refuse_request(1, g), std::nullopt);
}

TEST(AdapterSlots, UnloadOfAnotherGenerationIsRefused) {
  AdapterSlots slots({1}, 2);
  EXPECT_EQ(std::get<std::string>(slots.unload(1, 5)), "LoRA adapter 1 is not loaded");
  EXPECT_EQ(std::get<std::string>(slots.unload(3, 0)), "LoRA adapter 3 is not loaded");
  EXPECT_EQ(slots.state(1), State::Loaded);
}

TEST(AdapterSlots, BrokenBookkeepingIsAnInvariantViolation) {
  AdapterSlots slots({1}, 1);
  EXPECT_THROW(slots.release(1), InvariantViolation);  // never acquired
  EXPECT_THROW(slots.freed(1), InvariantViolation);    // still loaded
  EXPECT_THROW(slots.finish_load(2), InvariantViolation);  // no load reserved
}

TEST(ScaledAdapters, OneIndexPerAdapterAndScale) {
  ScaledAdapters scaled;
  EXPECT_EQ(scaled.acquire(1, 0.5f), std::nullopt);
  scaled.add(1, 0.5f, 9);
  EXPECT_EQ(scaled.acquire(1, 0.5f), 9);
  EXPECT_EQ(scaled.acquire(1, 0.25f), std::nullopt);
  EXPECT_EQ(scaled.acquire(2, 0.5f), std::nullopt);
  scaled.add(2, 0.5f, 10);
  EXPECT_TRUE(scaled.holds(9));
  EXPECT_FALSE(scaled.release(9));  // two requests held it
  EXPECT_TRUE(scaled.release(9));
  EXPECT_FALSE(scaled.holds(9));
  EXPECT_EQ(scaled.acquire(1, 0.5f), std::nullopt);  // gone: the next request makes a new one
  EXPECT_TRUE(scaled.release(10));
  EXPECT_EQ(scaled.size(), 0u);
  EXPECT_THROW(scaled.release(10), InvariantViolation);
}

}  // namespace
}  // namespace kairo::engine
