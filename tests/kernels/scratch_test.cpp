// The CPU kernels' per-thread scratch: growth that the system cannot back throws OutOfMemory with the size (forced
// by capping a forked child's address space), and leaves the buffer empty rather than stale, so the next, smaller
// request gets memory again.
#include "kernels/cpu/scratch.h"

#include <gtest/gtest.h>

#include <cstring>

#include "address_space_cap.h"
#include "core/out_of_memory.h"

namespace kairo::kernels::cpu {
namespace {

TEST(Scratch, GrowthThatCannotBeBackedThrowsAndTheNextRequestStillGetsMemory) {
  if (!kairo::testing::kAddressSpaceCapWorks) GTEST_SKIP() << "sanitizers abort on a failed allocation";
  const auto run = kairo::testing::run_with_address_space_cap(
      16ull << 20,
      [] {
        std::string out;
        try {
          thread_scratch(ScratchSlot::Activations, size_t{64} << 20);
          out = "grew";
        } catch (const OutOfMemory& e) {
          out = e.what();
        }
        void* small = thread_scratch(ScratchSlot::Activations, 4096);
        if (small == nullptr) return out + ", then nullptr";
        std::memset(small, 1, 4096);
        return out + ", then memory";
      },
      [] { std::memset(thread_scratch(ScratchSlot::Activations, size_t{1} << 20), 0, size_t{1} << 20); });
  ASSERT_TRUE(run.ok()) << run.how();
  EXPECT_EQ(run.output, "cannot allocate 96.00 MiB of CPU kernel scratch, then memory");
}

}  // namespace
}  // namespace kairo::kernels::cpu
