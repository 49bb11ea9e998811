// Per-request allocation, decode growth, slot mapping, out-of-blocks and freeing, with exact block ids.
#include "kv/kv_cache_manager.h"

#include <gtest/gtest.h>

#include "kv_test_util.h"

namespace kairo::kv {
namespace {

using testing::ids;
using testing::make_manager;
using testing::seq;

TEST(KVCacheManager, PrefillDecodeSlotsAndFreeOrder) {
  auto kv = make_manager(10, 4);
  std::vector<int32_t> t = seq(100, 10);
  const PrefixHit hit = kv.get_computed_blocks(t);
  EXPECT_TRUE(hit.blocks.empty());
  auto a = kv.allocate_slots(1, t, 10, &hit);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->new_blocks, ids({1, 2, 3}));
  EXPECT_TRUE(a->copies.empty());
  EXPECT_EQ(a->n_cached_tokens, 0);
  EXPECT_EQ(kv.block_table(1), ids({1, 2, 3}));
  EXPECT_EQ(kv.n_tokens(1), 10);
  EXPECT_TRUE(kv.pool().is_cached(BlockId{1}));
  EXPECT_TRUE(kv.pool().is_cached(BlockId{2}));
  EXPECT_FALSE(kv.pool().is_cached(BlockId{3}));  // partial blocks are never cached
  EXPECT_EQ(kv.slot(1, 0), 4);
  EXPECT_EQ(kv.slot(1, 9), 3 * 4 + 1);

  // Decode: tokens 10 and 11 fill block 3, token 12 opens block 4.
  t.push_back(200);
  EXPECT_TRUE(kv.allocate_slots(1, t, 1)->new_blocks.empty());
  t.push_back(201);
  EXPECT_TRUE(kv.allocate_slots(1, t, 1)->new_blocks.empty());
  EXPECT_TRUE(kv.pool().is_cached(BlockId{3}));
  t.push_back(202);
  EXPECT_EQ(kv.allocate_slots(1, t, 1)->new_blocks, ids({4}));
  EXPECT_EQ(kv.n_tokens(1), 13);
  EXPECT_EQ(kv.slot(1, 12), 4 * 4 + 0);
  EXPECT_DOUBLE_EQ(kv.usage(), 4.0 / 9.0);

  kv.free(1);
  EXPECT_FALSE(kv.has_request(1));
  EXPECT_TRUE(kv.block_table(1).empty());
  EXPECT_DOUBLE_EQ(kv.usage(), 0.0);
  // Uncached 4 to the head; cached 3, 2, 1 (freed last-to-first) to the tail.
  EXPECT_EQ(kv.pool().free_list(), ids({4, 5, 6, 7, 8, 9, 3, 2, 1}));
}

TEST(KVCacheManager, OutOfBlocksChangesNothing) {
  auto kv = make_manager(4, 4);  // 3 usable blocks
  ASSERT_EQ(kv.allocate_slots(1, seq(0, 8), 8)->new_blocks, ids({1, 2}));
  EXPECT_FALSE(kv.allocate_slots(2, seq(50, 9), 9).has_value());
  EXPECT_FALSE(kv.has_request(2));
  EXPECT_EQ(kv.pool().free_list(), ids({3}));
  ASSERT_EQ(kv.allocate_slots(2, seq(50, 4), 4)->new_blocks, ids({3}));
  // Request 1 needs a third block for token 8: refused, it keeps its 8 tokens.
  EXPECT_FALSE(kv.allocate_slots(1, seq(0, 9), 1).has_value());
  EXPECT_EQ(kv.n_tokens(1), 8);
  EXPECT_EQ(kv.block_table(1), ids({1, 2}));
  EXPECT_DOUBLE_EQ(kv.usage(), 1.0);
  // Preempt request 2; now it fits.
  kv.free(2);
  EXPECT_EQ(kv.allocate_slots(1, seq(0, 9), 1)->new_blocks, ids({3}));
}

TEST(KVCacheManager, PrefixCachingDisabled) {
  auto kv = make_manager(6, 2, /*caching=*/false);
  const auto t = seq(0, 6);
  ASSERT_EQ(kv.allocate_slots(1, t, 6)->new_blocks, ids({1, 2, 3}));
  EXPECT_EQ(kv.pool().n_cached(), 0);
  kv.free(1);
  EXPECT_TRUE(kv.get_computed_blocks(t).blocks.empty());
  EXPECT_EQ(kv.prefix_cache_queries(), 0);
  // Nothing cached: freed blocks are reused first, most recently freed on top.
  EXPECT_EQ(kv.pool().free_list(), ids({1, 2, 3, 4, 5}));
}

TEST(KVCacheManager, FreeAndAbortReturnEverything) {
  auto kv = make_manager(20, 4);
  const auto prompt = seq(0, 14);
  auto hit = kv.get_computed_blocks(prompt);
  ASSERT_TRUE(kv.allocate_slots(1, prompt, 14, &hit));
  hit = kv.get_computed_blocks(prompt);
  EXPECT_EQ(hit.n_tokens, 12);
  ASSERT_TRUE(kv.allocate_slots(2, prompt, 2, &hit));
  kv.fork(2, 3);
  auto grown = prompt;
  grown.push_back(99);
  ASSERT_EQ(kv.allocate_slots(3, grown, 1)->copies.size(), 1u);
  ASSERT_TRUE(kv.allocate_slots(4, seq(500, 30), 30));
  EXPECT_GT(kv.usage(), 0.0);

  for (RequestId id : {3, 1, 4, 2}) kv.free(id);
  kv.free(2);   // double free: ignored
  kv.free(77);  // unknown: ignored
  EXPECT_DOUBLE_EQ(kv.usage(), 0.0);
  EXPECT_EQ(kv.pool().n_free(), 19);
  for (int32_t b = 1; b < 20; ++b) EXPECT_EQ(kv.pool().ref_count(BlockId{b}), 0) << b;
}

}  // namespace
}  // namespace kairo::kv
