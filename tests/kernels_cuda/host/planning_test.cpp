// Graph buckets and device-memory planning: pure arithmetic, checked with exact values.
#include <gtest/gtest.h>

#include "kernels/cuda/graph_buckets.h"
#include "kernels/cuda/launch_config.h"
#include "kernels/cuda/memory_plan.h"

namespace kairo::kernels::cuda {
namespace {

TEST(GraphBuckets, PowersOfTwoThenMultiplesOfEight) {
  EXPECT_EQ(GraphBuckets(20).sizes(), (std::vector<int>{1, 2, 4, 8, 16, 24}));
  EXPECT_EQ(GraphBuckets(1).sizes(), (std::vector<int>{1}));
  EXPECT_EQ(GraphBuckets(3).sizes(), (std::vector<int>{1, 2, 4}));
  EXPECT_EQ(GraphBuckets(256).sizes().size(), 3u + 32u);
  EXPECT_EQ(GraphBuckets(256).largest(), 256);
}

TEST(GraphBuckets, SelectsTheSmallestBucketThatHoldsTheBatch) {
  const GraphBuckets b(64);
  EXPECT_EQ(b.select(1), 1);
  EXPECT_EQ(b.select(3), 4);
  EXPECT_EQ(b.select(5), 8);
  EXPECT_EQ(b.select(17), 24);
  EXPECT_EQ(b.select(64), 64);
  EXPECT_EQ(b.select(65), std::nullopt);  // runs eagerly
  EXPECT_EQ(b.select(0), std::nullopt);
}

TEST(KvPlan, BytesPerBlock) {
  EXPECT_EQ(kv_bytes_per_block(32, 8, 128, 16, DType::F16), 2ull * 32 * 16 * 8 * 128 * 2);
  EXPECT_EQ(kv_bytes_per_block(2, 2, 32, 16, DType::F32), 2ull * 2 * 16 * 2 * 32 * 4);
}

TEST(KvPlan, FillsWhatIsLeftUnderTheUtilization) {
  const uint64_t gib = 1ull << 30;
  // 100 GiB device, 20 GiB in use (weights), 90% usable, 2 GiB reserved: 68 GiB for KV.
  const Result<KvPoolPlan> p = plan_kv_pool(80 * gib, 100 * gib, 0.9, 2 * gib, 2ull << 20, 0);
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_EQ(p->n_blocks, 68 * 512);
  EXPECT_EQ(p->n_bytes, 68 * gib);
  const Result<KvPoolPlan> capped = plan_kv_pool(80 * gib, 100 * gib, 0.9, 2 * gib, 2ull << 20, 1000);
  ASSERT_TRUE(capped.ok());
  EXPECT_EQ(capped->n_blocks, 1000);
}

TEST(KvPlan, NotEnoughMemoryIsAnErrorThatSaysWhatToChange) {
  const uint64_t gib = 1ull << 30;
  const Result<KvPoolPlan> p = plan_kv_pool(1 * gib, 10 * gib, 0.9, 1 * gib, 2ull << 20, 0);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.error().message.find("not enough device memory for a KV cache"), std::string::npos);
  EXPECT_NE(p.error().message.find("use a smaller model or quantization"), std::string::npos);
}

TEST(Workspace, DecodeNeedsOnlyAttentionPartials) {
  const DeviceLimits dev{132, 227 * 1024, 228 * 1024};
  WorkspaceShape s;
  s.max_tokens = 1;
  s.max_rows = 128256;
  s.max_cols = 14336;
  s.n_heads = 32;
  s.n_kv_heads = 8;
  s.head_dim = 128;
  s.max_ctx = 4096;
  const WorkspaceSizes w = workspace_sizes(s, dev);
  EXPECT_EQ(w.dequant_bytes, 0);
  EXPECT_EQ(w.act16_bytes, 0);
  EXPECT_EQ(w.attn_partial_bytes, align_up(4 * 32 * 32 * 130, 256));
}

TEST(Workspace, PrefillReservesTheGemmTiles) {
  const DeviceLimits dev{132, 227 * 1024, 228 * 1024};
  WorkspaceShape s;
  s.max_tokens = 512;
  s.max_rows = 128256;
  s.max_cols = 14336;
  s.n_heads = 32;
  s.n_kv_heads = 8;
  s.head_dim = 128;
  s.max_ctx = 4096;
  const WorkspaceSizes w = workspace_sizes(s, dev);
  EXPECT_EQ(w.dequant_bytes, kDequantTileBytes);
  EXPECT_EQ(w.act16_bytes, 2 * 512 * 14336);
  // The largest partial buffer of any step size up to 512 tokens: a step of 1 token splits 32 ways.
  EXPECT_GE(w.attn_partial_bytes, 4 * 32 * 32 * 130);
}

TEST(ArenaCursor, AlignsAndRefusesOverflow) {
  ArenaCursor a(1024);
  EXPECT_EQ(a.take(10), 0);
  EXPECT_EQ(a.take(10), 256);
  EXPECT_EQ(a.take(100, 16), 272);
  EXPECT_EQ(a.used(), 372);
  EXPECT_EQ(a.take(700), std::nullopt);  // 512 + 700 > 1024
  EXPECT_EQ(a.take(512), 512);
  EXPECT_EQ(a.take(1), std::nullopt);
}

}  // namespace
}  // namespace kairo::kernels::cuda
