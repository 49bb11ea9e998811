// The KV bookkeeping's always-on invariant checks (core/check.h): each misuse throws InvariantViolation with a message
// that names the block, the request and the count involved, and the failed call leaves the state as it found it. These
// run in the release build too, where assert() is compiled out.
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "core/check.h"
#include "kv/block_pool.h"
#include "kv/free_block_queue.h"
#include "kv/kv_cache_manager.h"
#include "kv_test_util.h"

namespace kairo::kv {
namespace {

using testing::ids;
using testing::seq;

// The message of the InvariantViolation that f throws ("" and a test failure if it throws none).
std::string violation(const std::function<void()>& f) {
  try {
    f();
  } catch (const InvariantViolation& e) {
    return e.message();
  }
  ADD_FAILURE() << "no InvariantViolation thrown";
  return "";
}

TEST(KvInvariants, ABlockPushedTwiceIntoTheFreeListIsCaught) {
  FreeBlockQueue q(8);
  q.push_back(BlockId{3});
  q.push_back(BlockId{5});
  EXPECT_EQ(violation([&] { q.push_back(BlockId{3}); }),
            "free list: block 3 is already in the free list (freed twice)");
  EXPECT_EQ(violation([&] { q.push_front(BlockId{5}); }),
            "free list: block 5 is already in the free list (freed twice)");
  EXPECT_EQ(q.to_vector(), ids({3, 5}));  // links intact
  EXPECT_EQ(violation([&] { q.remove(BlockId{4}); }), "free list: block 4 is not in the free list");
  EXPECT_EQ(violation([&] { q.push_back(BlockId{8}); }), "free list: block 8 is outside 0..7");
  q.remove(BlockId{3});
  q.remove(BlockId{5});
  EXPECT_EQ(violation([&] { q.pop_front(); }), "free list: pop from an empty free list");
}

TEST(KvInvariants, DoubleFreeIsCaught) {
  BlockPool pool(5, 4);
  ASSERT_EQ(*pool.allocate(2, 1), ids({1, 2}));
  pool.release(ids({2}), 1);
  EXPECT_EQ(violation([&] { pool.release(ids({2}), 1); }),
            "block pool: request 1 releases block 2, whose ref count is already 0 (released more often than "
            "referenced: a double free)");
  EXPECT_EQ(pool.ref_count(BlockId{2}), 0);
  EXPECT_EQ(pool.free_list(), ids({2, 3, 4}));  // once, where the first release put it
  pool.check_accounting();
}

TEST(KvInvariants, RefCountUnderflowOfASharedBlockIsCaught) {
  BlockPool pool(5, 4);
  ASSERT_EQ(*pool.allocate(1, 1), ids({1}));
  pool.touch(BlockId{1}, 2);  // request 2 shares it (a prefix hit): ref count 2
  pool.release(ids({1}), 1);
  pool.release(ids({1}), 2);
  EXPECT_EQ(violation([&] { pool.release(ids({1}), 2); }),
            "block pool: request 2 releases block 1, whose ref count is already 0 (released more often than "
            "referenced: a double free)");
  EXPECT_EQ(pool.ref_count(BlockId{1}), 0);  // never below 0
  EXPECT_EQ(pool.n_used(), 0);
  pool.check_accounting();
}

TEST(KvInvariants, ReleasingABlockAnotherRequestHoldsAloneIsCaught) {
  BlockPool pool(5, 4);
  ASSERT_EQ(*pool.allocate(2, 7), ids({1, 2}));
  EXPECT_EQ(violation([&] { pool.release(ids({2}), 8); }),
            "block pool: request 8 releases block 2, which request 7 holds alone");
  EXPECT_EQ(pool.ref_count(BlockId{2}), 1);  // still request 7's
  EXPECT_FALSE(pool.is_free(BlockId{2}));
  // A block revived from the free list by a prefix hit is its new holder's alone.
  pool.release(ids({2}), 7);
  pool.touch(BlockId{2}, 9);
  EXPECT_EQ(violation([&] { pool.release(ids({2}), 7); }),
            "block pool: request 7 releases block 2, which request 9 holds alone");
  // Shared blocks are counted, not attributed: either holder may drop its reference.
  pool.touch(BlockId{1}, 8);
  pool.release(ids({1}), 8);
  pool.release(ids({1}), 7);
  EXPECT_EQ(pool.ref_count(BlockId{1}), 0);
}

TEST(KvInvariants, TheNullBlockAndForeignIdsAreNotBlocksOfThePool) {
  BlockPool pool(5, 4);
  EXPECT_EQ(violation([&] { pool.touch(kNullBlock, 1); }),
            "block pool: touching block 0, which is not a usable block (1..4)");
  EXPECT_EQ(violation([&] { pool.release(ids({5}), 1); }),
            "block pool: releasing block 5, which is not a usable block (1..4)");
  EXPECT_EQ(violation([&] { pool.register_block(BlockId{1}, 3, kNullBlock, seq(0, 4), ""); }),
            "block pool: publishing block 1 with ref count 0, not cached, with 4 tokens for a block of 4");
}

TEST(KvInvariants, TheManagerChecksSlotsForksAndRollbacks) {
  KVCacheManager kv(KVCacheConfig{9, 4, true});
  const auto tokens = seq(0, 10);
  ASSERT_TRUE(kv.allocate_slots(1, tokens, 10).has_value());  // blocks 1 2 3; the first two published
  EXPECT_EQ(kv.slot(1, 9), 3 * 4 + 1);
  EXPECT_EQ(violation([&] { kv.slot(1, 12); }),
            "kv cache: request 1 has no block of its own for position 12 (3 blocks in its full table)");
  EXPECT_EQ(violation([&] { kv.slot(2, 0); }),
            "kv cache: request 2 has no block of its own for position 0 (0 blocks in its full table)");
  EXPECT_EQ(violation([&] { kv.rollback(1, 6); }),
            "kv cache: request 1 rolls back to 6 tokens, into its 2 hashed blocks");
  EXPECT_EQ(violation([&] { kv.fork(2, 3); }), "kv cache: fork of request 2 (unknown) into request 3 (new)");
  ASSERT_TRUE(kv.allocate_slots(2, tokens, 1).has_value());
  EXPECT_EQ(violation([&] { kv.fork(1, 2); }),
            "kv cache: fork of request 1 (known) into request 2 (already holding KV)");
  EXPECT_EQ(violation([&] { kv.allocate_slots(1, tokens, 2, nullptr, 3); }),
            "kv cache: request 1 asks for 2 new slots of which 3 lookahead");
  EXPECT_EQ(violation([&] { kv.allocate_slots(1, tokens, 2); }), "kv cache: request 1 commits 12 tokens but gives 10");
  kv.check_accounting();
  kv.free(1);
  kv.free(2);
  kv.check_accounting();
  EXPECT_EQ(kv.pool().n_free(), 8);
}

}  // namespace
}  // namespace kairo::kv
