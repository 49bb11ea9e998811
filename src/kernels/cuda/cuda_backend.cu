#include "kernels/cuda/cuda_backend.h"

#include <cstdio>
#include <cstdlib>

#include "core/format.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/cuda_context.h"
#include "kernels/cuda/cuda_weights.h"
#include "kernels/cuda/ops.h"

namespace kairo::kernels::cuda {
namespace {

PackedLayout layout_of(const MatrixView& w) {
  if (w.packing != kCudaPacking) {
    cuda_fail("cuda backend", "MatrixView is not a device upload (use upload_matrix / pack_weights / CudaWeights)",
              __FILE__, __LINE__);
  }
  Result<PackedLayout> l = packed_layout(w.dtype, w.n_rows, w.n_cols);
  if (!l.ok()) cuda_fail("matrix layout", l.error().message.c_str(), __FILE__, __LINE__);
  return *l;
}

void matmul(const MatrixView& w, const float* x, float* y, int64_t n_tokens, ThreadPool&) {
  if (n_tokens == 0) return;
  CudaContext& ctx = CudaContext::get();
  const PackedLayout l = layout_of(w);
  const auto* base = static_cast<const uint8_t*>(w.data);
  if (choose_matmul_path(l, n_tokens, ctx.limits()) == MatmulPath::Gemv) {
    gemv(l, base, x, y, n_tokens, gemv_config(l, n_tokens, ctx.limits()), ctx.stream());
  } else {
    gemm(l, base, x, y, n_tokens, ctx);
  }
}

void rms_norm_op(const float* x, const float* weight, float* y, int64_t n_tokens, int64_t dim, float eps) {
  rms_norm(x, weight, y, n_tokens, dim, eps, CudaContext::get().stream());
}

// RopeParams::freq_factors is a host pointer; the table has nowhere to keep its device copy. Models run through
// CudaDevice (cuda_device.h), which uploads the factors once; reaching this through the table is a programmer error.
void rope_op(float* x, const int32_t* positions, int64_t n_tokens, const RopeParams& p) {
  if (p.freq_factors != nullptr) {
    std::fprintf(stderr, "cuda_backend().rope: frequency factors need CudaDevice::rope (a device copy)\n");
    std::abort();
  }
  rope(x, positions, n_tokens, p, nullptr, CudaContext::get().stream());
}

void swiglu_op(const float* gate, const float* up, float* out, int64_t n) {
  swiglu(gate, up, out, n, CudaContext::get().stream());
}

void geglu_op(const float* gate, const float* up, float* out, int64_t n) {
  geglu(gate, up, out, n, CudaContext::get().stream());
}

void add_op(float* y, const float* x, int64_t n) { add(y, x, n, CudaContext::get().stream()); }

void add_bias_op(float* x, const float* bias, int64_t n_tokens, int64_t n) {
  add_bias(x, bias, n_tokens, n, CudaContext::get().stream());
}

void get_row_op(const MatrixView& table, int64_t row, float* out) {
  const PackedLayout l = layout_of(table);
  get_rows(l, static_cast<const uint8_t*>(table.data), nullptr, row, 1, out, CudaContext::get().stream());
}

void kv_write_op(const KvLayerView& kv, const int64_t* slot_mapping, const float* k, const float* v,
                 int64_t n_tokens) {
  kv_write(kv, slot_mapping, k, v, n_tokens, CudaContext::get().stream());
}

void attention_op(const float* q, float* out, const KvLayerView& kv, const AttentionBatch& batch, int n_heads,
                  float scale, ThreadPool&) {
  if (batch.n_tokens == 0) return;
  CudaContext& ctx = CudaContext::get();
  const int64_t max_ctx = static_cast<int64_t>(batch.max_blocks_per_seq) * kv.block_size;
  const AttentionPlan plan = plan_attention(batch.n_tokens, n_heads, kv.n_kv_heads, kv.head_dim, max_ctx,
                                            ctx.limits());
  float* partials = plan.partial_floats > 0 ? ctx.attention_workspace(4 * plan.partial_floats) : nullptr;
  paged_attention(q, out, kv, batch, n_heads, scale, plan, partials, ctx.stream());
}

// Uploads (the CUDA "packing" is the device copy). An empty result means the loader skipped cuda_check_weight().
PackedMatrix pack_weights_op(const MatrixView& w) {
  Result<PackedMatrix> m = upload_matrix(w);
  return m.ok() ? std::move(m).value() : PackedMatrix{};
}

}  // namespace

const Backend& cuda_backend() {
  static const Backend backend{
      "cuda",      matmul,      rms_norm_op, rope_op,      swiglu_op,       geglu_op,      add_op,
      add_bias_op, get_row_op,  kv_write_op, attention_op, pack_weights_op, nullptr,
      nullptr,
  };
  return backend;
}

void cuda_get_rows(const MatrixView& table, const int32_t* ids, int64_t n, float* out) {
  const PackedLayout l = layout_of(table);
  get_rows(l, static_cast<const uint8_t*>(table.data), ids, 0, n, out, CudaContext::get().stream());
}

void cuda_argmax(const float* logits, int64_t n_rows, int64_t n_vocab, int32_t* out) {
  argmax_rows(logits, n_rows, n_vocab, out, CudaContext::get().stream());
}

Status cuda_check_model_shape(int n_heads, int n_kv_heads, int head_dim, DType kv_dtype) {
  KAIRO_TRY_STATUS(check_attention_shape(n_heads, n_kv_heads, head_dim));
  if (kv_dtype != DType::F16 && kv_dtype != DType::BF16 && kv_dtype != DType::F32) {
    return Error{strprintf("KV cache type %s is not supported by the CUDA backend (F16, BF16 or F32)",
                           std::string(dtype_name(kv_dtype)).c_str())};
  }
  return Status::success();
}

}  // namespace kairo::kernels::cuda
