#include "kv/block_pool.h"

#include <gtest/gtest.h>

#include "kv_test_util.h"

namespace kairo::kv {
namespace {

using testing::ids;
using testing::seq;

constexpr BlockHolder kHolder = 1;  // one request holds every reference, except where a test says otherwise

TEST(BlockPool, NullBlockReservedAndIdsInOrder) {
  BlockPool pool(5, 4);
  EXPECT_EQ(pool.n_free(), 4);
  EXPECT_EQ(pool.free_list(), ids({1, 2, 3, 4}));
  EXPECT_DOUBLE_EQ(pool.usage(), 0.0);

  EXPECT_EQ(*pool.allocate(2, kHolder), ids({1, 2}));
  EXPECT_EQ(pool.ref_count(BlockId{1}), 1);
  EXPECT_DOUBLE_EQ(pool.usage(), 0.5);
  EXPECT_FALSE(pool.allocate(3, kHolder).has_value());  // only 2 left: nothing changes
  EXPECT_EQ(pool.free_list(), ids({3, 4}));
  EXPECT_EQ(*pool.allocate(2, kHolder), ids({3, 4}));
  EXPECT_DOUBLE_EQ(pool.usage(), 1.0);
  EXPECT_FALSE(pool.allocate(1, kHolder).has_value());
  EXPECT_TRUE(pool.allocate(0, kHolder)->empty());
}

TEST(BlockPool, RefCountsAndUncachedBlocksReturnToHead) {
  BlockPool pool(6, 4);
  ASSERT_EQ(*pool.allocate(3, kHolder), ids({1, 2, 3}));  // free: 4 5
  pool.touch(BlockId{2}, kHolder);
  EXPECT_EQ(pool.ref_count(BlockId{2}), 2);
  pool.release(ids({3, 2, 1}), kHolder);
  EXPECT_EQ(pool.ref_count(BlockId{2}), 1);
  // Uncached blocks go to the head, each in front of the previous one.
  EXPECT_EQ(pool.free_list(), ids({1, 3, 4, 5}));
  pool.release(ids({2}), kHolder);
  EXPECT_EQ(pool.free_list(), ids({2, 1, 3, 4, 5}));
  EXPECT_DOUBLE_EQ(pool.usage(), 0.0);
}

TEST(BlockPool, CachedBlocksQueueAtTailAndAreEvictedInLruOrder) {
  BlockPool pool(6, 2);
  ASSERT_EQ(*pool.allocate(3, kHolder), ids({1, 2, 3}));
  ASSERT_TRUE(pool.register_block(BlockId{1}, 100, kNullBlock, seq(0, 2), "salt"));
  ASSERT_TRUE(pool.register_block(BlockId{2}, 101, BlockId{1}, seq(2, 2), ""));
  EXPECT_EQ(pool.n_cached(), 2);
  pool.release(ids({3, 2, 1}), kHolder);
  // 3 is uncached -> head; 2 then 1 appended at the tail.
  EXPECT_EQ(pool.free_list(), ids({3, 4, 5, 2, 1}));
  EXPECT_EQ(pool.lookup(100, kNullBlock, seq(0, 2), "salt"), BlockId{1});
  EXPECT_EQ(pool.lookup(101, BlockId{1}, seq(2, 2), ""), BlockId{2});

  // A hit revives a free cached block.
  pool.touch(BlockId{1}, kHolder);
  EXPECT_EQ(pool.free_list(), ids({3, 4, 5, 2}));
  pool.release(ids({1}), kHolder);
  EXPECT_EQ(pool.free_list(), ids({3, 4, 5, 2, 1}));

  // Allocating 4 evicts block 2: its entry disappears and its child link is gone.
  EXPECT_EQ(*pool.allocate(4, kHolder), ids({3, 4, 5, 2}));
  EXPECT_FALSE(pool.is_cached(BlockId{2}));
  EXPECT_FALSE(pool.lookup(101, BlockId{1}, seq(2, 2), "").has_value());
  EXPECT_TRUE(pool.is_cached(BlockId{1}));
  EXPECT_EQ(pool.n_cached(), 1);
}

TEST(BlockPool, LookupVerifiesTokensParentAndExtraKeys) {
  BlockPool pool(4, 2);
  ASSERT_EQ(*pool.allocate(2, kHolder), ids({1, 2}));
  ASSERT_TRUE(pool.register_block(BlockId{1}, 7, kNullBlock, seq(0, 2), "s"));
  ASSERT_TRUE(pool.register_block(BlockId{2}, 8, BlockId{1}, seq(2, 2), ""));
  EXPECT_FALSE(pool.lookup(7, kNullBlock, seq(1, 2), "s").has_value());   // tokens differ
  EXPECT_FALSE(pool.lookup(7, kNullBlock, seq(0, 2), "t").has_value());   // salt differs
  EXPECT_FALSE(pool.lookup(8, kNullBlock, seq(2, 2), "").has_value());    // parent differs
  EXPECT_FALSE(pool.lookup(8, BlockId{3}, seq(2, 2), "").has_value());
  EXPECT_FALSE(pool.lookup(9, BlockId{1}, seq(2, 2), "").has_value());    // hash unknown
  EXPECT_EQ(pool.lookup(8, BlockId{1}, seq(2, 2), ""), BlockId{2});
  // Same hash again: first one wins.
  ASSERT_EQ(*pool.allocate(1, kHolder), ids({3}));  // only a held block may be published
  EXPECT_FALSE(pool.register_block(BlockId{3}, 7, kNullBlock, seq(0, 2), "s"));
}

TEST(BlockPool, StaleChildIsReplacedAndUnreachable) {
  BlockPool pool(4, 1);
  ASSERT_EQ(*pool.allocate(2, kHolder), ids({1, 2}));
  ASSERT_TRUE(pool.register_block(BlockId{1}, 10, kNullBlock, seq(5, 1), ""));
  ASSERT_TRUE(pool.register_block(BlockId{2}, 11, BlockId{1}, seq(6, 1), ""));
  pool.release(ids({1}), kHolder);  // parent free (tail), child still held
  EXPECT_EQ(*pool.allocate(2, kHolder), ids({3, 1}));  // evicts parent 1
  // Block 1 gets the same first-block content again: a new generation, so the old child does not follow it.
  ASSERT_TRUE(pool.register_block(BlockId{1}, 10, kNullBlock, seq(5, 1), ""));
  EXPECT_FALSE(pool.lookup(11, BlockId{1}, seq(6, 1), "").has_value());
  // Its hash slot is reclaimed by a live chain.
  ASSERT_TRUE(pool.register_block(BlockId{3}, 11, BlockId{1}, seq(6, 1), ""));
  EXPECT_FALSE(pool.is_cached(BlockId{2}));
  EXPECT_EQ(pool.lookup(11, BlockId{1}, seq(6, 1), ""), BlockId{3});
}

}  // namespace
}  // namespace kairo::kv
