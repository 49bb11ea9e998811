#include "kernels/backend.h"

#include "kernels/cpu/cpu_backend.h"
#include "kernels/ref/ref_ops.h"

namespace kairo::kernels {

const Backend& reference_backend() {
  static const Backend backend{
      "reference",  ref::matmul, ref::rms_norm, ref::rope,     ref::swiglu,
      ref::add,     ref::add_bias, ref::get_row, ref::kv_write, ref::attention,
      nullptr,
  };
  return backend;
}

const Backend& best_cpu_backend() {
  static const Backend* best = cpu::cpu_backend(cpu::best_isa());
  return *best;
}

}  // namespace kairo::kernels
