#include "kernels/backend.h"

#include "kernels/cpu/cpu_backend.h"
#include "kernels/ref/ref_ops.h"

namespace kairo::kernels {

const Backend& reference_backend() {
  static const Backend backend{
      "reference",  ref::matmul, ref::rms_norm, ref::rope,     ref::swiglu,  ref::geglu,
      ref::add,     ref::add_bias, ref::get_row, ref::kv_write, ref::attention,
      nullptr,      nullptr,     nullptr,       nullptr,      ref::add_lora_deltas,
  };
  return backend;
}

void matmul_shared_input(const Backend& be, const MatrixView* ws, int n_mats, const float* x, float* const* ys,
                         int64_t n_tokens, ThreadPool& pool, Numerics numerics) {
  if (numerics == Numerics::Relaxed && be.matmul_relaxed != nullptr)
    return be.matmul_relaxed(ws, n_mats, x, ys, n_tokens, pool);
  if (be.matmul_shared_input != nullptr) return be.matmul_shared_input(ws, n_mats, x, ys, n_tokens, pool);
  for (int i = 0; i < n_mats; ++i) be.matmul(ws[i], x, ys[i], n_tokens, pool);
}

void matmul(const Backend& be, const MatrixView& w, const float* x, float* y, int64_t n_tokens, ThreadPool& pool,
            Numerics numerics) {
  if (numerics == Numerics::Relaxed && be.matmul_relaxed != nullptr) return be.matmul_relaxed(&w, 1, x, &y, n_tokens, pool);
  be.matmul(w, x, y, n_tokens, pool);
}

const Backend& best_cpu_backend() {
  static const Backend* best = cpu::cpu_backend(cpu::best_isa());
  return *best;
}

}  // namespace kairo::kernels
