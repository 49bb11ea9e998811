#include "kernels/cuda/launch_config.h"

#include <algorithm>

#include "core/format.h"

namespace kairo::kernels::cuda {

int64_t gemv_smem_per_token(const PackedLayout& l) { return static_cast<int64_t>(l.chunk_cols) * (l.n_chunks | 1); }

MatmulPath choose_matmul_path(const PackedLayout& l, int64_t n_tokens, const DeviceLimits& dev) {
  if (n_tokens > kGemvMaxTokens) return MatmulPath::Gemm;
  // Even one token's activations must fit in shared memory.
  if (gemv_smem_per_token(l) * 4 > dev.max_smem_per_block) return MatmulPath::Gemm;
  return MatmulPath::Gemv;
}

GemvConfig gemv_config(const PackedLayout& l, int64_t n_tokens, const DeviceLimits& dev) {
  GemvConfig g;
  g.x_stride = l.n_chunks | 1;
  const int64_t per_token = gemv_smem_per_token(l) * 4;
  int nt = 1;
  while (nt < kGemvMaxTokensPerPass && nt < n_tokens) nt *= 2;
  while (nt > 1 && nt * per_token > kGemvSmemTarget) nt /= 2;
  g.tokens_per_pass = nt;
  g.n_passes = static_cast<int>((n_tokens + nt - 1) / nt);
  g.smem_bytes = nt * per_token;
  // More rows per warp amortise the block's activation fill, but only while every resident-block slot of every SM
  // still gets a block (small matrices keep one row per warp to spread over the whole device).
  const int64_t resident = std::max<int64_t>(1, std::min<int64_t>(2048 / (kGemvWarps * 32), dev.smem_per_sm / g.smem_bytes));
  g.rows_per_warp = 1;
  for (int r : {4, 2}) {
    const int64_t blocks = (l.n_rows + kGemvWarps * r - 1) / (kGemvWarps * r);
    if (blocks * g.n_passes >= dev.n_sms * resident) {
      g.rows_per_warp = r;
      break;
    }
  }
  g.n_blocks = (l.n_rows + kGemvWarps * g.rows_per_warp - 1) / (kGemvWarps * g.rows_per_warp);
  return g;
}

int64_t gemm_tile_rows(int64_t n_rows, int64_t n_cols, int64_t tile_bytes) {
  const int64_t fit = tile_bytes / (2 * n_cols);
  if (fit >= n_rows) return n_rows;
  return std::min(n_rows, std::max<int64_t>(64, fit / 64 * 64));
}

Status check_attention_shape(int n_heads, int n_kv_heads, int head_dim) {
  if (n_kv_heads <= 0 || n_heads <= 0 || n_heads % n_kv_heads != 0) {
    return Error{strprintf("attention with %d heads and %d KV heads: the head count must be a positive multiple of "
                           "the KV head count", n_heads, n_kv_heads)};
  }
  if (head_dim <= 0 || head_dim > kAttnMaxHeadDim) {
    return Error{strprintf("head_dim %d is not supported by the CUDA attention kernels (1..%d)", head_dim,
                           kAttnMaxHeadDim)};
  }
  return Status::success();
}

AttentionPlan plan_attention(int64_t n_tokens, int n_heads, int n_kv_heads, int head_dim, int64_t max_ctx,
                             const DeviceLimits& dev, Numerics numerics) {
  AttentionPlan p;
  const int group = n_heads / n_kv_heads;
  p.heads_per_block = 1;
  while (p.heads_per_block < std::min(group, 8)) p.heads_per_block *= 2;
  p.n_head_groups = (group + p.heads_per_block - 1) / p.heads_per_block;
  const int lanes_elems = (head_dim + 31) / 32;
  p.elems_per_lane = 1;
  while (p.elems_per_lane < lanes_elems) p.elems_per_lane *= 2;

  // Flash-decoding: split the KV range until the grid covers the device ~4 blocks per SM deep.
  max_ctx = std::max<int64_t>(1, max_ctx);
  if (numerics == Numerics::Exact) {
    p.split_keys = static_cast<int>(max_ctx);
    return p;
  }
  const int64_t base = std::max<int64_t>(1, n_tokens * n_kv_heads * p.n_head_groups);
  const int64_t target = 4ll * dev.n_sms;
  const int64_t max_splits = std::max<int64_t>(1, (max_ctx + kAttnMinSplitKeys - 1) / kAttnMinSplitKeys);
  const int64_t splits = std::clamp<int64_t>((target + base - 1) / base, 1, max_splits);
  p.split_keys = static_cast<int>((max_ctx + splits - 1) / splits);
  p.n_splits = static_cast<int>((max_ctx + p.split_keys - 1) / p.split_keys);
  p.partial_floats = p.n_splits > 1 ? n_tokens * n_heads * p.n_splits * (head_dim + 2) : 0;
  return p;
}

int64_t elementwise_blocks(int64_t n, const DeviceLimits& dev) {
  const int64_t blocks = (n + kElementwiseThreads - 1) / kElementwiseThreads;
  return std::clamp<int64_t>(blocks, 1, 16ll * dev.n_sms);
}

}  // namespace kairo::kernels::cuda
