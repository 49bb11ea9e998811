// Speculative decoding's KV bookkeeping: lookahead slots for proposed tokens are never published to the prefix
// cache, and rollback gives back exactly the blocks past the accepted tokens, in both block groups.
#include <gtest/gtest.h>

#include "kv/kv_cache_manager.h"
#include "kv_test_util.h"

namespace kairo::kv {
namespace {

using testing::ids;
using testing::seq;

TEST(KVLookahead, ProposedTokensAreNotPublishedUntilCommitted) {
  KVCacheManager kv(KVCacheConfig{10, 4, true, hash_block_tokens});
  std::vector<int32_t> t = seq(100, 6);  // committed: 6 tokens, 5 computed
  ASSERT_TRUE(kv.allocate_slots(1, t, 5));
  // Verify token 5 plus 4 proposals (positions 6..9): blocks 2 (positions 4..7) and 3 (8..11) hold proposals.
  auto a = kv.allocate_slots(1, t, 5, nullptr, 4);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->new_blocks, ids({3}));
  EXPECT_EQ(kv.n_tokens(1), 10);
  EXPECT_TRUE(kv.pool().is_cached(BlockId{1}));
  EXPECT_FALSE(kv.pool().is_cached(BlockId{2}));  // full with proposals, but they are not the request's yet
  EXPECT_EQ(kv.slot(1, 9), 3 * 4 + 1);

  // One proposal accepted: positions 0..6 are the request's, 7..9 go back; block 3 returns to the pool.
  kv.rollback(1, 7);
  EXPECT_EQ(kv.n_tokens(1), 7);
  EXPECT_EQ(kv.block_table(1), ids({1, 2}));
  EXPECT_TRUE(kv.pool().is_free(BlockId{3}));
  EXPECT_FALSE(kv.pool().is_cached(BlockId{2}));

  // The accepted proposal and the corrected token are committed: the next step publishes block 2 with them.
  t.push_back(106);  // accepted
  t.push_back(555);  // sampled instead of the second proposal
  ASSERT_TRUE(kv.allocate_slots(1, t, 1));
  EXPECT_TRUE(kv.pool().is_cached(BlockId{2}));
  const PrefixHit hit = kv.get_computed_blocks(std::vector<int32_t>{100, 101, 102, 103, 104, 105, 106, 555, 0});
  EXPECT_EQ(hit.blocks, ids({1, 2}));
  kv.free(1);
  EXPECT_DOUBLE_EQ(kv.usage(), 0.0);
}

TEST(KVLookahead, RollbackToABlockBoundaryKeepsNoEmptyBlock) {
  KVCacheManager kv(KVCacheConfig{10, 4, true, hash_block_tokens});
  const std::vector<int32_t> t = seq(0, 4);
  ASSERT_TRUE(kv.allocate_slots(1, t, 3));
  ASSERT_TRUE(kv.allocate_slots(1, t, 6, nullptr, 5));  // positions 3..8: blocks 1, 2, 3
  EXPECT_EQ(kv.block_table(1), ids({1, 2, 3}));
  kv.rollback(1, 4);  // nothing accepted
  EXPECT_EQ(kv.block_table(1), ids({1}));
  EXPECT_EQ(kv.n_tokens(1), 4);
  EXPECT_DOUBLE_EQ(kv.usage(), 1.0 / 9.0);
}

TEST(KVLookahead, RollbackReleasesTheWindowedGroupsBlocksToo) {
  // Window of 4 tokens: the windowed group's blocks behind it are released, the tail ones roll back.
  KVCacheManager kv(KVCacheConfig{20, 4, true, hash_block_tokens, /*window=*/4, /*n_window_blocks=*/20});
  const std::vector<int32_t> t = seq(0, 13);
  ASSERT_TRUE(kv.allocate_slots(1, t, 12));
  ASSERT_TRUE(kv.allocate_slots(1, t, 5, nullptr, 4));  // positions 12..16: blocks 3 and 4 of both groups
  ASSERT_EQ(kv.block_table(1).size(), 5u);
  ASSERT_EQ(kv.block_table(1, KvGroup::Window).size(), 5u);
  const double window_used = kv.window_pool().usage();
  kv.rollback(1, 14);
  EXPECT_EQ(kv.block_table(1).size(), 4u);
  EXPECT_EQ(kv.block_table(1, KvGroup::Window).size(), 4u);
  EXPECT_LT(kv.window_pool().usage(), window_used);
  kv.free(1);
  EXPECT_DOUBLE_EQ(kv.usage(), 0.0);
  EXPECT_DOUBLE_EQ(kv.window_pool().usage(), 0.0);
}

}  // namespace
}  // namespace kairo::kv
