// Automatic prefix caching: multi-turn resend, salts, hit verification under forced hash collisions.
#include <gtest/gtest.h>

#include "kv/kv_cache_manager.h"
#include "kv_test_util.h"

namespace kairo::kv {
namespace {

using testing::concat;
using testing::ids;
using testing::make_manager;
using testing::seq;

KVCacheManager make_hashed(int32_t n_blocks, int32_t block_size, BlockHashFn fn) {
  return KVCacheManager(KVCacheConfig{n_blocks, block_size, true, std::move(fn)});
}

// Prefill the prompt, then decode n_generated tokens; the last sampled token is never fed back, so its KV is
// never computed (as in a real engine). Returns prompt + generated.
std::vector<int32_t> run_turn(KVCacheManager& kv, RequestId id, std::vector<int32_t> tokens, int32_t n_generated,
                              int32_t first_generated, std::string_view salt = {}) {
  const PrefixHit hit = kv.get_computed_blocks(tokens, salt);
  const int32_t n_prompt = static_cast<int32_t>(tokens.size());
  EXPECT_TRUE(kv.allocate_slots(id, tokens, n_prompt - hit.n_tokens, &hit));
  for (int32_t i = 0; i < n_generated; ++i) {
    tokens.push_back(first_generated + i);
    if (i + 1 < n_generated) {
      EXPECT_TRUE(kv.allocate_slots(id, tokens, 1));
    }
  }
  return tokens;
}

TEST(PrefixCache, ResentMultiTurnConversationHitsAllFullHistoryBlocks) {
  auto kv = make_manager(32, 4);
  const auto history = run_turn(kv, 1, seq(1000, 22), 5, 5000);  // 27 tokens, KV for 26
  const auto turn1_blocks = kv.block_table(1);
  ASSERT_EQ(turn1_blocks, ids({1, 2, 3, 4, 5, 6, 7}));
  kv.free(1);

  const auto turn2 = concat(history, seq(7000, 10));  // 37 tokens
  const PrefixHit hit = kv.get_computed_blocks(turn2);
  // floor(27 / 4) = 6 full blocks of history: all of them hit.
  EXPECT_EQ(hit.blocks, ids({1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(hit.n_tokens, 24);
  EXPECT_EQ(kv.prefix_cache_queries(), 22 + 37);
  EXPECT_EQ(kv.prefix_cache_hits(), 24);

  // Only the 13 new tokens are computed. Block 7 (uncached partial) is reused first.
  const auto a = kv.allocate_slots(2, turn2, 37 - hit.n_tokens, &hit);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->n_cached_tokens, 24);
  EXPECT_EQ(a->new_blocks, ids({7, 8, 9, 10}));
  EXPECT_EQ(kv.block_table(2), ids({1, 2, 3, 4, 5, 6, 7, 8, 9, 10}));
  EXPECT_EQ(kv.n_tokens(2), 37);
  for (int32_t b = 1; b <= 6; ++b) EXPECT_EQ(kv.pool().ref_count(BlockId{b}), 1);
}

TEST(PrefixCache, HitsOnRunningRequestShareBlocks) {
  auto kv = make_manager(16, 4);
  const auto prompt = seq(0, 13);
  run_turn(kv, 1, prompt, 1, 900);
  const PrefixHit hit = kv.get_computed_blocks(prompt);
  EXPECT_EQ(hit.blocks, ids({1, 2, 3}));
  ASSERT_EQ(kv.allocate_slots(2, prompt, 1, &hit)->new_blocks, ids({5}));
  for (int32_t b = 1; b <= 3; ++b) EXPECT_EQ(kv.pool().ref_count(BlockId{b}), 2);
  kv.free(1);
  for (int32_t b = 1; b <= 3; ++b) EXPECT_FALSE(kv.pool().is_free(BlockId{b}));
  kv.free(2);
  EXPECT_DOUBLE_EQ(kv.usage(), 0.0);
}

TEST(PrefixCache, NeverCoversTheLastToken) {
  auto kv = make_manager(8, 4);
  run_turn(kv, 1, seq(0, 9), 1, 50);  // blocks of tokens 0-3 and 4-7 cached
  kv.free(1);
  EXPECT_EQ(kv.get_computed_blocks(seq(0, 8)).n_tokens, 4);
  EXPECT_EQ(kv.get_computed_blocks(seq(0, 9)).n_tokens, 8);
  EXPECT_EQ(kv.get_computed_blocks(seq(0, 4)).n_tokens, 0);
  EXPECT_EQ(kv.get_computed_blocks(std::vector<int32_t>{}).n_tokens, 0);
}

TEST(PrefixCache, SaltsSeparateTenants) {
  auto kv = make_manager(8, 4);
  run_turn(kv, 1, seq(0, 9), 1, 50, "alice");
  kv.free(1);
  EXPECT_EQ(kv.get_computed_blocks(seq(0, 9), "bob").n_tokens, 0);
  EXPECT_EQ(kv.get_computed_blocks(seq(0, 9)).n_tokens, 0);
  EXPECT_EQ(kv.get_computed_blocks(seq(0, 9), "alice").n_tokens, 8);
}

TEST(PrefixCache, EvictedBlocksStopHitting) {
  auto kv = make_manager(4, 2);       // 3 usable
  run_turn(kv, 1, seq(0, 5), 1, 50);  // blocks 1,2 cached, 3 partial
  kv.free(1);
  EXPECT_EQ(kv.pool().free_list(), ids({3, 2, 1}));
  // A new 4-token request takes the uncached block 3, then evicts block 2 (the deeper one).
  ASSERT_EQ(kv.allocate_slots(2, seq(100, 4), 4)->new_blocks, ids({3, 2}));
  const PrefixHit hit = kv.get_computed_blocks(seq(0, 5));
  EXPECT_EQ(hit.blocks, ids({1}));
}

TEST(PrefixCache, ConcurrentDuplicateFirstPublisherWins) {
  auto kv = make_manager(12, 4);
  const auto prompt = seq(0, 9);
  ASSERT_EQ(kv.allocate_slots(1, prompt, 9)->new_blocks, ids({1, 2, 3}));
  ASSERT_EQ(kv.allocate_slots(2, prompt, 9)->new_blocks, ids({4, 5, 6}));  // no lookup: computes a duplicate
  EXPECT_FALSE(kv.pool().is_cached(BlockId{4}));
  kv.free(2);
  kv.free(1);
  EXPECT_EQ(kv.get_computed_blocks(prompt).blocks, ids({1, 2}));
}

TEST(PrefixCache, StaleHitIsTruncatedOnAdoption) {
  auto kv = make_manager(6, 2);
  run_turn(kv, 1, seq(0, 5), 1, 50);  // 1,2 cached; 3 partial
  kv.free(1);                          // free: 3 4 5 2 1
  const PrefixHit hit = kv.get_computed_blocks(seq(0, 5));
  ASSERT_EQ(hit.blocks, ids({1, 2}));
  // Someone else allocates before the hit is adopted and evicts block 2.
  ASSERT_EQ(kv.allocate_slots(9, seq(100, 8), 8)->new_blocks, ids({3, 4, 5, 2}));
  kv.free(9);
  const auto a = kv.allocate_slots(2, seq(0, 5), 1, &hit);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->n_cached_tokens, 2);  // only block 1 survived
  EXPECT_EQ(kv.n_tokens(2), 3);
  EXPECT_EQ(kv.block_table(2)[0], BlockId{1});
}

// Collision safety: a hit must never return a block whose KV belongs to another prefix.
TEST(PrefixCache, ConstantHashNeverReturnsWrongBlocks) {
  auto kv = make_hashed(16, 4, [](uint64_t, std::span<const int32_t>, std::string_view) { return uint64_t{7}; });
  run_turn(kv, 1, seq(0, 9), 1, 50);
  EXPECT_TRUE(kv.pool().is_cached(BlockId{1}));
  EXPECT_FALSE(kv.pool().is_cached(BlockId{2}));  // hash 7 taken: not published
  kv.free(1);
  EXPECT_EQ(kv.get_computed_blocks(seq(50, 9)).n_tokens, 0);     // same hash, other tokens
  EXPECT_EQ(kv.get_computed_blocks(seq(0, 9)).blocks, ids({1}));  // block 2 lookup finds block 1: wrong parent
}

TEST(PrefixCache, HashIgnoringParentIsCaughtByParentCheck) {
  // Hash of the block's tokens only: "C after A" and "C after B" collide.
  auto kv = make_hashed(
      16, 4, [](uint64_t, std::span<const int32_t> t, std::string_view e) { return hash_block_tokens(0, t, e); });
  const auto A = seq(0, 4), B = seq(10, 4), C = seq(20, 4);
  run_turn(kv, 1, concat(concat(A, C), {99}), 1, 50);  // A, C published
  run_turn(kv, 2, concat(B, {98}), 1, 60);               // B published
  const auto y = concat(concat(B, C), {97});
  ASSERT_TRUE(kv.pool().is_cached(kv.block_table(1)[1]));  // "C after A" holds hash(C)
  const PrefixHit hit = kv.get_computed_blocks(y);
  EXPECT_EQ(hit.blocks, std::vector<BlockId>{kv.block_table(2)[0]});  // B hits; "C after A" is refused
  EXPECT_EQ(hit.n_tokens, 4);
}

TEST(PrefixCache, HashIgnoringSaltIsCaughtBySaltCheck) {
  auto kv = make_hashed(
      8, 4, [](uint64_t p, std::span<const int32_t> t, std::string_view) { return hash_block_tokens(p, t, {}); });
  run_turn(kv, 1, seq(0, 9), 1, 50, "alice");
  kv.free(1);
  EXPECT_EQ(kv.get_computed_blocks(seq(0, 9), "mallory").n_tokens, 0);
  EXPECT_EQ(kv.get_computed_blocks(seq(0, 9), "alice").n_tokens, 8);
}

TEST(BlockHash, ChainsParentTokensAndExtraKeys) {
  const auto t = seq(1, 4);
  const uint64_t h = hash_block_tokens(kRootBlockHash, t, "");
  EXPECT_EQ(h, hash_block_tokens(kRootBlockHash, t, ""));
  EXPECT_NE(h, hash_block_tokens(h, t, ""));
  EXPECT_NE(h, hash_block_tokens(kRootBlockHash, t, "s"));
  EXPECT_NE(h, hash_block_tokens(kRootBlockHash, std::vector<int32_t>{2, 1, 3, 4}, ""));
  EXPECT_NE(hash_block_tokens(kRootBlockHash, std::vector<int32_t>{1}, ""),
            hash_block_tokens(kRootBlockHash, std::vector<int32_t>{1, 0}, ""));
}

}  // namespace
}  // namespace kairo::kv
