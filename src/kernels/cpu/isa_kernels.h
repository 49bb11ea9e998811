#pragma once
// Entry points of the per-ISA kernel files. Each namespace is compiled with its ISA's flags; nothing here may be
// called unless cpu_features() says the CPU supports that ISA (cpu_backend() checks this).
#include "kernels/backend.h"

#define KAIRO_CPU_ELEMENTWISE_OPS                                                                             \
  void rms_norm(const float* x, const float* weight, float* y, int64_t n_tokens, int64_t dim, float eps);    \
  void rope(float* x, const int32_t* positions, int64_t n_tokens, const RopeParams& p);                     \
  void swiglu(const float* gate, const float* up, float* out, int64_t n);                                   \
  void geglu(const float* gate, const float* up, float* out, int64_t n);                                    \
  void add(float* y, const float* x, int64_t n);                                                            \
  void add_bias(float* x, const float* bias, int64_t n_tokens, int64_t n);                                  \
  void kv_write(const KvLayerView& kv, const int64_t* slot_mapping, const float* k, const float* v,         \
                int64_t n_tokens);                                                                          \
  void attention(const float* q, float* out, const KvLayerView& kv, const AttentionBatch& batch, int n_heads, \
                 float scale, ThreadPool& pool);                                                            \
  void matmul_float(const MatrixView& w, const float* x, float* y, int64_t n_tokens, ThreadPool& pool);        \
  void add_lora_deltas(const LoraDeltas& job, ThreadPool& pool);

namespace kairo::kernels::avx2 {
KAIRO_CPU_ELEMENTWISE_OPS
// Row-tile-packed weights (avx512::pack_weights' layouts) through the AVX2 row-tile kernels, any token count; other
// weights through matmul_float.
void matmul(const MatrixView& w, const float* x, float* y, int64_t n_tokens, ThreadPool& pool);
void matmul_shared_input(const MatrixView* ws, int n_mats, const float* x, float* const* ys, int64_t n_tokens,
                         ThreadPool& pool);
void matmul_grouped(const GroupedMatmul& g, ThreadPool& pool, Numerics numerics);
}  // namespace kairo::kernels::avx2

namespace kairo::kernels::neon {
KAIRO_CPU_ELEMENTWISE_OPS
// As the AVX2 backend's: row-tile-packed weights through the NEON row-tile kernels, other weights through matmul_float.
void matmul(const MatrixView& w, const float* x, float* y, int64_t n_tokens, ThreadPool& pool);
void matmul_shared_input(const MatrixView* ws, int n_mats, const float* x, float* const* ys, int64_t n_tokens,
                         ThreadPool& pool);
void matmul_grouped(const GroupedMatmul& g, ThreadPool& pool, Numerics numerics);
}  // namespace kairo::kernels::neon

namespace kairo::kernels::avx512 {
KAIRO_CPU_ELEMENTWISE_OPS
// Quantized weights: int8 activations with VNNI (one token: GEMV kernels; many: tiled GEMM). Float weights go to
// matmul_float.
void matmul(const MatrixView& w, const float* x, float* y, int64_t n_tokens, ThreadPool& pool);
// Backend::matmul_shared_input: one quantization and one pass when every weight is row-tile packed.
void matmul_shared_input(const MatrixView* ws, int n_mats, const float* x, float* const* ys, int64_t n_tokens,
                         ThreadPool& pool);
// Backend::matmul_grouped: every expert's row tiles in one pass, each input row quantized once.
void matmul_grouped(const GroupedMatmul& g, ThreadPool& pool, Numerics numerics);
}  // namespace kairo::kernels::avx512

namespace kairo::kernels::amx {
// As avx512::matmul, but many-token products of quantized weights use AMX tiles.
void matmul(const MatrixView& w, const float* x, float* y, int64_t n_tokens, ThreadPool& pool);
void matmul_shared_input(const MatrixView* ws, int n_mats, const float* x, float* const* ys, int64_t n_tokens,
                         ThreadPool& pool);
// Backend::matmul_relaxed: row-tile-packed (Q4_0, Q8_0, Q4_K, Q6_K) and float (F16, BF16, F32) weights times many
// tokens through bf16 tiles.
void matmul_relaxed(const MatrixView* ws, int n_mats, const float* x, float* const* ys, int64_t n_tokens,
                    ThreadPool& pool);
// As avx512::matmul_grouped; experts with more tokens than the row-tile kernels take go through AMX tiles alone.
void matmul_grouped(const GroupedMatmul& g, ThreadPool& pool, Numerics numerics);
}  // namespace kairo::kernels::amx

#undef KAIRO_CPU_ELEMENTWISE_OPS
