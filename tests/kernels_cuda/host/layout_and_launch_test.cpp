// Packed layouts and launch-shape arithmetic, with the numbers worked out by hand for H100/H200-like limits.
#include <gtest/gtest.h>

#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/launch_config.h"
#include "kernels/cuda/packed_layout.h"

namespace kairo::kernels::cuda {
namespace {

const DeviceLimits kH100{132, 227 * 1024, 228 * 1024};

PackedLayout layout(DType t, int64_t rows, int64_t cols) {
  Result<PackedLayout> l = packed_layout(t, rows, cols);
  EXPECT_TRUE(l.ok()) << l.error().message;
  return *l;
}

TEST(PackedLayout, RegionsAreAlignedAndSized) {
  const PackedLayout q8 = layout(DType::Q8_0, 3, 4096);
  EXPECT_EQ(q8.chunk_cols, 16);
  EXPECT_EQ(q8.n_chunks, 256);
  EXPECT_EQ(q8.qs_row_bytes, 4096);
  EXPECT_EQ(q8.scale_row_elems, 128);
  EXPECT_EQ(q8.scales_offset, 3 * 4096);
  EXPECT_EQ(q8.total_bytes, 3 * 4096 + 768);  // 3 * 128 * 2 = 768, already 256-aligned

  const PackedLayout q4 = layout(DType::Q4_0, 7, 64);
  EXPECT_EQ(q4.qs_row_bytes, 32);
  EXPECT_EQ(q4.scales_offset, 256);  // 7 * 32 = 224 rounded up
  EXPECT_EQ(q4.total_bytes, 512);

  const PackedLayout q4k = layout(DType::Q4_K, 2, 512);
  EXPECT_EQ(q4k.qs_row_bytes, 288);
  EXPECT_EQ(q4k.scale_row_elems, 0);
  EXPECT_EQ(q4k.scales_offset, 0);

  const PackedLayout q6k = layout(DType::Q6_K, 1, 256);
  EXPECT_EQ(q6k.qs_row_bytes, 208);
  EXPECT_EQ(q6k.scale_row_elems, 1);

  const PackedLayout f16 = layout(DType::F16, 2, 100);  // 200 bytes of values padded to 208
  EXPECT_EQ(f16.n_chunks, 13);
  EXPECT_EQ(f16.qs_row_bytes, 208);
  for (const PackedLayout& l : {q8, q4, q4k, q6k, f16}) {
    EXPECT_EQ(l.qs_row_bytes % 16, 0);
    EXPECT_EQ(l.scales_offset % 256, 0);
    EXPECT_EQ(l.total_bytes % 256, 0);
  }
}

TEST(PackedLayout, UnsupportedTypesAndShapesAreErrors) {
  const Result<PackedLayout> q5_0 = packed_layout(DType::Q5_0, 4, 256);
  ASSERT_FALSE(q5_0.ok());
  EXPECT_EQ(q5_0.error().message,
            "weight type Q5_0 is not supported by the CUDA backend (supported: F32, F16, BF16, Q8_0, Q4_0, Q4_K, "
            "Q5_K, Q6_K); requantize the model, e.g. to Q8_0 or Q4_K_M");
  const Result<PackedLayout> bad = packed_layout(DType::Q4_K, 4, 100);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message, "matrix of 4 x 100 Q4_K: the column count must be a positive multiple of 256");
}

TEST(GemvConfig, OneTokenDecodeOfAnAttentionProjection) {
  const PackedLayout l = layout(DType::Q8_0, 4096, 4096);
  ASSERT_EQ(choose_matmul_path(l, 1, kH100), MatmulPath::Gemv);
  const GemvConfig g = gemv_config(l, 1, kH100);
  EXPECT_EQ(g.tokens_per_pass, 1);
  EXPECT_EQ(g.n_passes, 1);
  EXPECT_EQ(g.x_stride, 257);
  EXPECT_EQ(g.smem_bytes, 16 * 257 * 4);
  EXPECT_EQ(g.rows_per_warp, 1);  // 4096 rows: even 2 rows per warp would leave resident-block slots empty
  EXPECT_EQ(g.n_blocks, 512);
}

TEST(GemvConfig, WideOutputGetsMoreRowsPerWarp) {
  const PackedLayout l = layout(DType::Q4_K, 128256, 4096);
  const GemvConfig g = gemv_config(l, 1, kH100);
  EXPECT_EQ(g.rows_per_warp, 4);
  EXPECT_EQ(g.n_blocks, (128256 + 31) / 32);
}

TEST(GemvConfig, TokensShareAPassWhileTheirActivationsFitTheTarget) {
  const PackedLayout l = layout(DType::Q8_0, 4096, 4096);  // 16448 bytes per token
  const GemvConfig three = gemv_config(l, 3, kH100);
  EXPECT_EQ(three.tokens_per_pass, 2);  // 4 tokens would be 65792 bytes > 64 KiB
  EXPECT_EQ(three.n_passes, 2);
  const GemvConfig two = gemv_config(l, 2, kH100);
  EXPECT_EQ(two.tokens_per_pass, 2);
  EXPECT_EQ(two.n_passes, 1);
  const PackedLayout small = layout(DType::F16, 256, 256);  // 8 * 33 * 4 = 1056 bytes per token
  const GemvConfig eight = gemv_config(small, 16, kH100);
  EXPECT_EQ(eight.tokens_per_pass, 8);
  EXPECT_EQ(eight.n_passes, 2);
}

TEST(MatmulPath, PrefillAndHugeRowsUseGemm) {
  const PackedLayout l = layout(DType::Q4_0, 4096, 4096);
  EXPECT_EQ(choose_matmul_path(l, 16, kH100), MatmulPath::Gemv);
  EXPECT_EQ(choose_matmul_path(l, 17, kH100), MatmulPath::Gemm);
  const PackedLayout wide = layout(DType::F32, 8, 1 << 16);  // 256 KiB of activations for one token
  EXPECT_EQ(choose_matmul_path(wide, 1, kH100), MatmulPath::Gemm);
}

TEST(GemmTiles, DequantTileRowsFitTheBudget) {
  EXPECT_EQ(gemm_tile_rows(4096, 4096, kDequantTileBytes), 4096);  // 32 MiB fits whole
  EXPECT_EQ(gemm_tile_rows(128256, 4096, kDequantTileBytes), 8192);
  EXPECT_EQ(gemm_tile_rows(10, 1 << 20, 1 << 20), 10);  // never more rows than the matrix has
}

TEST(AttentionPlan, DecodeSplitsTheContextAcrossTheDevice) {
  const AttentionPlan p = plan_attention(1, 32, 8, 128, 4096, kH100);
  EXPECT_EQ(p.heads_per_block, 4);
  EXPECT_EQ(p.n_head_groups, 1);
  EXPECT_EQ(p.elems_per_lane, 4);
  EXPECT_EQ(p.n_splits, 32);  // capped at 4096 / 128 keys
  EXPECT_EQ(p.split_keys, 128);
  EXPECT_EQ(p.partial_floats, 1 * 32 * 32 * 130);
}

// Splits follow the token count, and so would the rounding: the batch-invariance contract never splits.
TEST(AttentionPlan, ExactNumericsNeverSplitsWhateverTheTokenCount) {
  for (int64_t n_tokens : {1, 3, 64, 512}) {
    const AttentionPlan p = plan_attention(n_tokens, 32, 8, 128, 4096, kH100, Numerics::Exact);
    EXPECT_EQ(p.n_splits, 1) << n_tokens;
    EXPECT_EQ(p.split_keys, 4096) << n_tokens;
    EXPECT_EQ(p.partial_floats, 0) << n_tokens;
    EXPECT_EQ(p.heads_per_block, 4) << n_tokens;
  }
}

TEST(AttentionPlan, PrefillNeedsNoSplits) {
  const AttentionPlan p = plan_attention(512, 32, 8, 128, 512, kH100);
  EXPECT_EQ(p.n_splits, 1);
  EXPECT_EQ(p.split_keys, 512);
  EXPECT_EQ(p.partial_floats, 0);
}

TEST(AttentionPlan, OddGroupsAndSmallHeads) {
  const AttentionPlan qwen = plan_attention(1, 14, 2, 64, 100, kH100);  // group 7, head_dim 64
  EXPECT_EQ(qwen.heads_per_block, 8);
  EXPECT_EQ(qwen.n_head_groups, 1);
  EXPECT_EQ(qwen.elems_per_lane, 2);
  EXPECT_EQ(qwen.n_splits, 1);  // 100 keys: under one minimum split
  const AttentionPlan tiny = plan_attention(3, 4, 4, 16, 128, kH100);  // aidreams: MHA, head_dim 16
  EXPECT_EQ(tiny.heads_per_block, 1);
  EXPECT_EQ(tiny.elems_per_lane, 1);
  const AttentionPlan wide = plan_attention(1, 64, 4, 96, 1024, kH100);  // group 16
  EXPECT_EQ(wide.heads_per_block, 8);
  EXPECT_EQ(wide.n_head_groups, 2);
  EXPECT_EQ(wide.elems_per_lane, 4);
}

TEST(AttentionPlan, ShapeChecks) {
  EXPECT_TRUE(check_attention_shape(32, 8, 128).ok());
  const Status bad_group = check_attention_shape(30, 8, 128);
  ASSERT_FALSE(bad_group.ok());
  EXPECT_EQ(bad_group.error().message,
            "attention with 30 heads and 8 KV heads: the head count must be a positive multiple of the KV head count");
  const Status big = check_attention_shape(8, 8, 512);
  ASSERT_FALSE(big.ok());
  EXPECT_EQ(big.error().message, "head_dim 512 is not supported by the CUDA attention kernels (1..256)");
}

TEST(Elementwise, GridIsCapped) {
  EXPECT_EQ(elementwise_blocks(1, kH100), 1);
  EXPECT_EQ(elementwise_blocks(257, kH100), 2);
  EXPECT_EQ(elementwise_blocks(1ll << 40, kH100), 16 * 132);
}

}  // namespace
}  // namespace kairo::kernels::cuda

namespace kairo::kernels::cuda {
namespace {

// A CUDA error surfaces as DeviceLost (the engine fails the requests in flight and the server stays up), never as
// an abort of the process.
TEST(CudaErrors, AFailedCallThrowsDeviceLostNamingIt) {
  try {
    CUDA_CHECK(cudaErrorIllegalAddress);
    FAIL() << "CUDA_CHECK did not throw";
  } catch (const DeviceLost& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("cudaErrorIllegalAddress failed: an illegal memory access was encountered"), std::string::npos)
        << what;
  }
}

}  // namespace
}  // namespace kairo::kernels::cuda
