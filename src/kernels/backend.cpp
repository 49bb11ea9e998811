#include "kernels/backend.h"

#include "kernels/ref/ref_ops.h"

namespace kairo::kernels {

const Backend& reference_backend() {
  static const Backend backend{
      "reference",  ref::matmul, ref::rms_norm, ref::rope,     ref::swiglu,
      ref::add,     ref::add_bias, ref::get_row, ref::kv_write, ref::attention,
  };
  return backend;
}

const Backend& best_cpu_backend() { return reference_backend(); }

}  // namespace kairo::kernels
