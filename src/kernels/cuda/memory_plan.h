#pragma once
// Device memory planning as host arithmetic: how many KV blocks fit beside the weights, how big the kernel
// workspaces must be for the largest step, and a bump-allocator cursor. The planner/server calls these with numbers
// read from cudaMemGetInfo; tests call them with made-up ones.
#include <cstdint>
#include <optional>

#include "core/result.h"
#include "tensor/dtype.h"

namespace kairo::kernels::cuda {

// Bytes of one KV block over all layers: K and V, block_size slots of n_kv_heads * head_dim values each.
uint64_t kv_bytes_per_block(int n_layers, int n_kv_heads, int head_dim, int block_size, DType kv_dtype);

struct KvPoolPlan {
  int64_t n_blocks = 0;
  uint64_t n_bytes = 0;
};

// The KV pool that fits: of the device's total memory, `utilization` may be used by this process; what is already
// in use (total - free: weights, context, other processes) and `reserve_bytes` (workspaces, graphs) come off first.
// max_blocks caps the pool (0: no cap). Errors say how much memory is missing and what to change.
Result<KvPoolPlan> plan_kv_pool(uint64_t free_bytes, uint64_t total_bytes, double utilization, uint64_t reserve_bytes,
                                uint64_t bytes_per_block, int64_t max_blocks);

// Workspaces the CUDA backend needs for steps up to these shapes; reserved once so a captured graph never sees a
// reallocation.
struct WorkspaceShape {
  int64_t max_tokens = 1;       // tokens per step
  int64_t max_rows = 0;         // largest matrix: output features (the vocabulary for the output projection)
  int64_t max_cols = 0;         // largest matrix: input features (ffn_dim for the down projection)
  int n_heads = 0;
  int n_kv_heads = 0;
  int head_dim = 0;
  int64_t max_ctx = 0;          // max_blocks_per_seq * block_size
};
struct WorkspaceSizes {
  int64_t dequant_bytes = 0;    // f16 tile of a dequantized weight matrix (GEMM path)
  int64_t act16_bytes = 0;      // activations converted to f16/bf16 for cuBLAS (GEMM path)
  int64_t attn_partial_bytes = 0;  // flash-decoding split partials
  int64_t total() const { return dequant_bytes + act16_bytes + attn_partial_bytes; }
};
struct DeviceLimits;
WorkspaceSizes workspace_sizes(const WorkspaceShape& shape, const DeviceLimits& dev);

// A bump allocator's bookkeeping over [0, capacity): aligned offsets, no frees (arena lifetime = the model's).
class ArenaCursor {
 public:
  explicit ArenaCursor(int64_t capacity) : capacity_(capacity) {}
  // Offset of `bytes` aligned to `align` (a power of two), or nullopt when it doesn't fit.
  std::optional<int64_t> take(int64_t bytes, int64_t align = 256);
  int64_t used() const { return used_; }
  int64_t capacity() const { return capacity_; }

 private:
  int64_t capacity_;
  int64_t used_ = 0;
};

}  // namespace kairo::kernels::cuda
