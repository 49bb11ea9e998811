#pragma once
// Launch-shape decisions for the CUDA kernels, as plain host functions of the problem shape and device limits, so
// they are unit-tested without a device and a CUDA graph captured for one shape replays with the same shape.
#include <cstdint>

#include "core/result.h"
#include "kernels/backend.h"
#include "kernels/cuda/packed_layout.h"

namespace kairo::kernels::cuda {

// What the launch math needs to know about the device (cudaDeviceProp, read once by the context).
struct DeviceLimits {
  int n_sms = 132;
  int64_t max_smem_per_block = 227 * 1024;  // opt-in maximum (cudaDevAttrMaxSharedMemoryPerBlockOptin)
  int64_t smem_per_sm = 228 * 1024;
};

inline constexpr int kGemvWarps = 8;             // warps per GEMV block; each owns rows_per_warp rows
inline constexpr int kGemvMaxTokensPerPass = 8;  // activations of up to 8 tokens share one read of the weights
inline constexpr int kGemvMaxTokens = 16;        // beyond this, dequantize + tensor-core GEMM wins
inline constexpr int64_t kGemvSmemTarget = 64 * 1024;  // keeps >= 3 GEMV blocks (24 warps) resident per SM

enum class MatmulPath { Gemv, Gemm };

struct GemvConfig {
  int tokens_per_pass = 1;  // NT: the kernel template instance (1, 2, 4 or 8)
  int n_passes = 1;         // grid.y: token groups, each re-reading the weights
  int rows_per_warp = 1;
  int64_t n_blocks = 0;     // grid.x
  int64_t x_stride = 0;     // floats between chunk-order rows of the activation tile (odd: no bank conflicts)
  int64_t smem_bytes = 0;   // dynamic shared memory: tokens_per_pass activation tiles
};

// Floats of shared memory one token's activations take in chunk order.
int64_t gemv_smem_per_token(const PackedLayout& l);
MatmulPath choose_matmul_path(const PackedLayout& l, int64_t n_tokens, const DeviceLimits& dev);
// Precondition: choose_matmul_path(...) == Gemv.
GemvConfig gemv_config(const PackedLayout& l, int64_t n_tokens, const DeviceLimits& dev);

// Rows of a quantized matrix dequantized to f16 per cuBLAS call, so the f16 tile fits `tile_bytes`.
int64_t gemm_tile_rows(int64_t n_rows, int64_t n_cols, int64_t tile_bytes);
inline constexpr int64_t kDequantTileBytes = 64ll << 20;

// Paged attention: one block of kAttnWarps warps per (token, KV head, head group, KV split).
inline constexpr int kAttnWarps = 4;
inline constexpr int kAttnMaxHeadDim = 256;
inline constexpr int kAttnMinSplitKeys = 128;  // a split shorter than this costs more to combine than it saves

struct AttentionPlan {
  int heads_per_block = 1;  // query heads sharing one K/V read (1, 2, 4 or 8): the template instance
  int n_head_groups = 1;    // blocks per KV head when the GQA group exceeds 8
  int elems_per_lane = 1;   // head_dim / 32 rounded up to a power of two (1, 2, 4 or 8): the template instance
  int n_splits = 1;         // flash-decoding splits of the KV range (1: the kernel writes the output directly)
  int split_keys = 0;       // keys per split
  int64_t partial_floats = 0;  // workspace for the split partials (0 when n_splits == 1)
};

// Checks that the attention kernels can run this head shape; the message says what is unsupported.
Status check_attention_shape(int n_heads, int n_kv_heads, int head_dim);
// max_ctx: the most keys any token may attend to (max_blocks_per_seq * block_size, known on the host). Splits
// depend on the token count, so Numerics::Exact (batch invariance) never splits.
AttentionPlan plan_attention(int64_t n_tokens, int n_heads, int n_kv_heads, int head_dim, int64_t max_ctx,
                             const DeviceLimits& dev, Numerics numerics = Numerics::Relaxed);

// 1D elementwise grids: blocks of 256 threads, capped (the kernels grid-stride loop over the rest).
inline constexpr int kElementwiseThreads = 256;
int64_t elementwise_blocks(int64_t n, const DeviceLimits& dev);

}  // namespace kairo::kernels::cuda
