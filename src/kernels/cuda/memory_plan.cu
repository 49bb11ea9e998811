#include "kernels/cuda/memory_plan.h"

#include <algorithm>

#include "core/format.h"
#include "kernels/cuda/launch_config.h"

namespace kairo::kernels::cuda {

uint64_t kv_bytes_per_block(int n_layers, int n_kv_heads, int head_dim, int block_size, DType kv_dtype) {
  const uint64_t elem = dtype_info(kv_dtype).block_bytes;  // F32/F16/BF16: block size 1
  return 2ull * n_layers * block_size * n_kv_heads * head_dim * elem;
}

Result<KvPoolPlan> plan_kv_pool(uint64_t free_bytes, uint64_t total_bytes, double utilization, uint64_t reserve_bytes,
                                uint64_t bytes_per_block, int64_t max_blocks) {
  const double allowed = static_cast<double>(total_bytes) * utilization;
  const double in_use = static_cast<double>(total_bytes - std::min(free_bytes, total_bytes));
  const double budget = allowed - in_use - static_cast<double>(reserve_bytes);
  if (bytes_per_block == 0 || budget < static_cast<double>(bytes_per_block)) {
    return Error{strprintf("not enough device memory for a KV cache: %s of %s may be used (utilization %.2f), "
                           "%s is already in use and %s is reserved for workspaces, but one KV block needs %s; "
                           "use a smaller model or quantization, or raise the memory utilization",
                           human_bytes(static_cast<uint64_t>(allowed)).c_str(), human_bytes(total_bytes).c_str(),
                           utilization, human_bytes(static_cast<uint64_t>(in_use)).c_str(),
                           human_bytes(reserve_bytes).c_str(), human_bytes(bytes_per_block).c_str())};
  }
  KvPoolPlan p;
  p.n_blocks = static_cast<int64_t>(budget / static_cast<double>(bytes_per_block));
  if (max_blocks > 0) p.n_blocks = std::min(p.n_blocks, max_blocks);
  p.n_bytes = static_cast<uint64_t>(p.n_blocks) * bytes_per_block;
  return p;
}

WorkspaceSizes workspace_sizes(const WorkspaceShape& s, const DeviceLimits& dev) {
  WorkspaceSizes w;
  if (s.max_tokens > kGemvMaxTokens && s.max_cols > 0) {
    // gemm_tile_rows() keeps any matrix up to max_rows x max_cols within this.
    w.dequant_bytes = align_up(std::min(2 * s.max_rows * s.max_cols, std::max(kDequantTileBytes, 128 * s.max_cols)), 256);
    w.act16_bytes = align_up(2 * s.max_tokens * s.max_cols, 256);
  }
  if (s.n_heads > 0) {
    // Fewer tokens get more splits, so the largest partial buffer may belong to a smaller step.
    int64_t floats = 0;
    for (int64_t n = 1; n <= s.max_tokens; ++n) {
      floats = std::max(floats, plan_attention(n, s.n_heads, s.n_kv_heads, s.head_dim, s.max_ctx, dev).partial_floats);
    }
    w.attn_partial_bytes = align_up(4 * floats, 256);
  }
  return w;
}

std::optional<int64_t> ArenaCursor::take(int64_t bytes, int64_t align) {
  const int64_t offset = (used_ + align - 1) & ~(align - 1);
  if (bytes < 0 || offset > capacity_ || bytes > capacity_ - offset) return std::nullopt;
  used_ = offset + bytes;
  return offset;
}

}  // namespace kairo::kernels::cuda
