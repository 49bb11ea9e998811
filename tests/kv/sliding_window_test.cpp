// The sliding-window layers' block group: blocks behind the window are released, a long sequence holds a bounded
// number of windowed blocks, prefix hits need only the windowed blocks the next token's window reaches, and
// copy-on-write and forks work in both groups.
#include <gtest/gtest.h>

#include "kv/kv_cache_manager.h"
#include "kv_test_util.h"

namespace kairo::kv {
namespace {

using testing::concat;
using testing::ids;
using testing::seq;

// window 8 over blocks of 4: a token at position p reads [p - 7, p], at most three blocks.
KVCacheManager make_windowed(int32_t n_blocks, int32_t n_window_blocks, bool caching = true) {
  return KVCacheManager(KVCacheConfig{n_blocks, 4, caching, hash_block_tokens, 8, n_window_blocks});
}

int32_t n_live(const std::vector<BlockId>& table) {
  int32_t n = 0;
  for (BlockId b : table) n += b != kNullBlock;
  return n;
}

TEST(SlidingWindowGroup, FirstBlockAWindowReaches) {
  auto kv = make_windowed(10, 10);
  EXPECT_EQ(kv.first_window_block(0), 0);
  EXPECT_EQ(kv.first_window_block(7), 0);   // reads [0, 7]
  EXPECT_EQ(kv.first_window_block(11), 1);  // reads [4, 11]
  EXPECT_EQ(kv.first_window_block(12), 1);  // reads [5, 12]: block 1 holds 5..7
  EXPECT_EQ(kv.first_window_block(15), 2);  // reads [8, 15]
  EXPECT_EQ(window_group_blocks(8, 4, 2, 16), 2 * (2 + 3) + 4);
}

TEST(SlidingWindowGroup, ReleasesBlocksBehindTheWindowAtTheNextAllocation) {
  auto kv = make_windowed(20, 20);
  std::vector<int32_t> t = seq(100, 10);
  const auto a = kv.allocate_slots(1, t, 10);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->new_blocks, ids({1, 2, 3}));
  EXPECT_EQ(a->new_window_blocks, ids({1, 2, 3}));
  EXPECT_EQ(kv.slot(1, 9, KvGroup::Window), 3 * 4 + 1);
  // Token 10 reads [3, 10]: all three blocks are still needed.
  t.push_back(7);
  ASSERT_TRUE(kv.allocate_slots(1, t, 1));
  EXPECT_EQ(kv.block_table(1, KvGroup::Window), ids({1, 2, 3}));
  // Token 11 reads [4, 11]: block 0 (positions 0..3) is behind every later token's window.
  t.push_back(8);
  ASSERT_TRUE(kv.allocate_slots(1, t, 1));
  t.push_back(9);
  const auto c = kv.allocate_slots(1, t, 1);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->new_blocks, ids({4}));
  EXPECT_EQ(c->new_window_blocks, ids({4}));
  EXPECT_EQ(kv.block_table(1, KvGroup::Window), ids({0, 2, 3, 4}));
  EXPECT_EQ(kv.block_table(1), ids({1, 2, 3, 4}));  // full-attention layers keep everything
  EXPECT_EQ(kv.window_pool().ref_count(BlockId{1}), 0);
  EXPECT_TRUE(kv.window_pool().is_cached(BlockId{1}));  // released, but still a prefix-cache entry
  kv.free(1);
  EXPECT_DOUBLE_EQ(kv.window_pool().usage(), 0.0);
  EXPECT_DOUBLE_EQ(kv.usage(), 0.0);
}

TEST(SlidingWindowGroup, LongSequenceHoldsABoundedNumberOfWindowedBlocks) {
  auto kv = make_windowed(40, 8);  // 7 usable windowed blocks for a 128-token sequence
  std::vector<int32_t> t = seq(0, 5);
  ASSERT_TRUE(kv.allocate_slots(1, t, 5));
  int32_t most = 0;
  while (t.size() < 128) {
    t.push_back(static_cast<int32_t>(t.size()) * 3);
    ASSERT_TRUE(kv.allocate_slots(1, t, 1)) << "at " << t.size();
    most = std::max(most, n_live(kv.block_table(1, KvGroup::Window)));
  }
  EXPECT_EQ(kv.block_table(1).size(), 32u);
  EXPECT_EQ(kv.block_table(1, KvGroup::Window).size(), 32u);
  EXPECT_LE(most, 4);  // the window's 8 positions over at most 3 blocks, plus the block being opened
  for (int32_t p = 120; p < 128; ++p) EXPECT_GE(kv.slot(1, p, KvGroup::Window), 4);
}

TEST(SlidingWindowGroup, ChunkedPrefillOverTheWindowFitsASmallPool) {
  auto kv = make_windowed(40, 8);
  const std::vector<int32_t> t = seq(0, 64);
  for (int32_t start = 0; start < 64; start += 8) ASSERT_TRUE(kv.allocate_slots(1, t, 8)) << start;
  EXPECT_LE(n_live(kv.block_table(1, KvGroup::Window)), 5);
  EXPECT_EQ(kv.n_tokens(1), 64);
}

TEST(SlidingWindowGroup, OutOfWindowedBlocksIsNulloptAndKeepsTheFullGroup) {
  auto kv = make_windowed(40, 4);  // 3 usable windowed blocks
  ASSERT_TRUE(kv.allocate_slots(1, seq(0, 12), 12));
  EXPECT_FALSE(kv.allocate_slots(2, seq(50, 4), 4).has_value());
  EXPECT_FALSE(kv.has_request(2));
  EXPECT_DOUBLE_EQ(kv.usage(), 3.0 / 39.0);  // nothing taken from the full pool either
}

TEST(SlidingWindowGroup, PrefixHitNeedsOnlyTheBlocksTheWindowReaches) {
  auto kv = make_windowed(40, 20);
  const std::vector<int32_t> prompt = seq(0, 32);
  ASSERT_TRUE(kv.allocate_slots(1, prompt, 32));
  kv.free(1);
  const auto next = concat(prompt, {900, 901});
  const PrefixHit hit = kv.get_computed_blocks(next);
  ASSERT_EQ(hit.n_tokens, 32);
  // Token 32 reads [25, 32]: windowed blocks 6 and 7 only.
  EXPECT_EQ(hit.window_blocks, ids({0, 0, 0, 0, 0, 0, 7, 8}));
  const auto a = kv.allocate_slots(2, next, 2, &hit);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->n_cached_tokens, 32);
  EXPECT_EQ(kv.block_table(2, KvGroup::Window), ids({0, 0, 0, 0, 0, 0, 7, 8, 9}));
  EXPECT_EQ(kv.window_pool().ref_count(BlockId{7}), 1);
  EXPECT_EQ(kv.window_pool().ref_count(BlockId{1}), 0);
}

TEST(SlidingWindowGroup, EvictedWindowedBlocksShortenTheHit) {
  auto kv = make_windowed(40, 6);  // 5 usable windowed blocks
  const std::vector<int32_t> prompt = seq(0, 16);
  ASSERT_TRUE(kv.allocate_slots(1, prompt, 16));  // windowed 1..4, all published
  kv.free(1);
  // Another request takes three windowed blocks: the free list hands out the uncached one (5), then evicts the
  // least recently freed cached ones (freed last-to-first: 4, then 3).
  ASSERT_TRUE(kv.allocate_slots(2, seq(500, 12), 12));
  EXPECT_EQ(kv.block_table(2, KvGroup::Window), ids({5, 4, 3}));
  // A hit of 4 blocks needs windowed blocks 2 and 3 (ids 3, 4): gone. A hit of 2 blocks (token 8 reads [1, 8])
  // needs blocks 0 and 1 (ids 1, 2): still cached.
  const PrefixHit hit = kv.get_computed_blocks(concat(prompt, {77}));
  EXPECT_EQ(hit.n_tokens, 8);
  EXPECT_EQ(hit.window_blocks, ids({1, 2}));
}

TEST(SlidingWindowGroup, HitIsVerifiedAgainstTheFullGroupsBlock) {
  // Evicting the full-attention block a windowed block was computed with makes the windowed copy unreachable, even
  // though its own hash and tokens still match.
  auto kv = make_windowed(5, 20);  // 4 usable full blocks
  const std::vector<int32_t> prompt = seq(0, 8);
  ASSERT_TRUE(kv.allocate_slots(1, prompt, 8));
  kv.free(1);
  ASSERT_TRUE(kv.allocate_slots(2, seq(300, 16), 16));  // every full block, the cached ones evicted
  kv.free(2);
  EXPECT_TRUE(kv.window_pool().is_cached(BlockId{1}));
  EXPECT_EQ(kv.get_computed_blocks(concat(prompt, {1})).n_tokens, 0);
  // Computed again: new full blocks (new generations) and new windowed blocks, which replace the stale entries.
  ASSERT_TRUE(kv.allocate_slots(3, prompt, 8));
  kv.free(3);
  EXPECT_FALSE(kv.window_pool().is_cached(BlockId{1}));
  const PrefixHit hit = kv.get_computed_blocks(concat(prompt, {1}));
  EXPECT_EQ(hit.n_tokens, 8);
  EXPECT_EQ(hit.window_blocks, ids({7, 8}));
}

TEST(SlidingWindowGroup, ForkSharesWindowedBlocksAndCopiesOnWrite) {
  auto kv = make_windowed(20, 20);
  const std::vector<int32_t> prompt = seq(0, 6);
  ASSERT_TRUE(kv.allocate_slots(1, prompt, 6));
  kv.fork(1, 2);
  EXPECT_EQ(kv.window_pool().ref_count(BlockId{2}), 2);
  const auto a = kv.allocate_slots(2, concat(prompt, {5}), 1);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->copies, (std::vector<BlockCopy>{{BlockId{2}, BlockId{3}, KvGroup::Full},
                                               {BlockId{2}, BlockId{3}, KvGroup::Window}}));
  EXPECT_EQ(kv.block_table(2, KvGroup::Window), ids({1, 3}));
  kv.free(1);
  kv.free(2);
  EXPECT_DOUBLE_EQ(kv.window_pool().usage(), 0.0);
}

TEST(SlidingWindowGroup, WithoutAWindowGroupNothingChanges) {
  KVCacheManager kv(KVCacheConfig{10, 4, true, hash_block_tokens, 8, 0});
  EXPECT_FALSE(kv.has_window_group());
  ASSERT_TRUE(kv.allocate_slots(1, seq(0, 20), 20));
  EXPECT_TRUE(kv.block_table(1, KvGroup::Window).empty());
  EXPECT_TRUE(kv.get_computed_blocks(seq(0, 21)).window_blocks.empty());
}

}  // namespace
}  // namespace kairo::kv
