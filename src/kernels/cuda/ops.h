#pragma once
// Kernel launchers (one family per .cu file), all enqueued on `stream`. Pointers are device pointers. The backend
// table (cuda_backend.cu) adapts kernels/backend.h's signatures to these.
#include "kernels/cuda/gpu_runtime.h"

#include <cstdint>

#include "kernels/backend.h"
#include "kernels/cuda/launch_config.h"
#include "kernels/cuda/packed_layout.h"

namespace kairo::kernels::cuda {

class CudaContext;

// gemv.cu: y[t, r] = W[r, :] . x[t, :] for few tokens, activations staged in shared memory.
void gemv(const PackedLayout& l, const uint8_t* w, const float* x, float* y, int64_t n_tokens, const GemvConfig& g,
          cudaStream_t stream);
void gemv_set_smem_limit(int64_t max_smem_bytes);

// gemm.cu: the same product through cuBLAS (quantized weights dequantized to f16 tiles first).
void gemm(const PackedLayout& l, const uint8_t* w, const float* x, float* y, int64_t n_tokens, CudaContext& ctx);
// Dequantizes rows [row0, row0 + n_rows) to f16 [n_rows, n_cols]. Also used by tests.
void dequantize_rows_f16(const PackedLayout& l, const uint8_t* w, int64_t row0, int64_t n_rows, void* out_f16,
                         cudaStream_t stream);

// elementwise.cu
void rms_norm(const float* x, const float* weight, float* y, int64_t n_tokens, int64_t dim, float eps,
              cudaStream_t stream);
// p.freq_factors is ignored: `freq_factors` is its device copy ([n_rot / 2] f32) or null.
void rope(float* x, const int32_t* positions, int64_t n_tokens, const RopeParams& p, const float* freq_factors,
          cudaStream_t stream);
void swiglu(const float* gate, const float* up, float* out, int64_t n, cudaStream_t stream);
void geglu(const float* gate, const float* up, float* out, int64_t n, cudaStream_t stream);
// gpt-oss's clamped SwiGLU (kernels/device.h)
void swiglu_oai(const float* gate, const float* up, float* out, int64_t n, float alpha, float limit,
                cudaStream_t stream);
void scale(float* x, int64_t n, float factor, cudaStream_t stream);
void add(float* y, const float* x, int64_t n, cudaStream_t stream);
void add_bias(float* x, const float* bias, int64_t n_tokens, int64_t n, cudaStream_t stream);
// Rows of a packed table to f32: row ids from device memory (ids != null) or the single host `row`.
void get_rows(const PackedLayout& l, const uint8_t* table, const int32_t* ids, int64_t row, int64_t n_rows,
              float* out, cudaStream_t stream);
void kv_write(const KvLayerView& kv, const int64_t* slot_mapping, const float* k, const float* v, int64_t n_tokens,
              cudaStream_t stream);

// moe_rows.cu: the row gathers and scatters of a mixture of experts (kernels/device.h).
// out[i, :] = x[rows[i], :]
void gather_rows(const float* x, const int32_t* rows, int64_t n, int64_t dim, float* out, cudaStream_t stream);
// y[rows[i], :] += scales[i] * x[i, :] (rows distinct within one call)
void add_rows_scaled(float* y, const float* x, const int32_t* rows, const float* scales, int64_t n, int64_t dim,
                     cudaStream_t stream);

// argmax.cu: out[r] = index of the largest of logits[r, :] (the first one on ties).
void argmax_rows(const float* logits, int64_t n_rows, int64_t n_vocab, int32_t* out, cudaStream_t stream);

// attention.cu
void paged_attention(const float* q, float* out, const KvLayerView& kv, const AttentionBatch& batch, int n_heads,
                     float scale, const AttentionPlan& plan, float* partials, cudaStream_t stream);

}  // namespace kairo::kernels::cuda
