#include "kernels/cpu/cpu_backend.h"

#include "kernels/cpu/isa_kernels.h"
#include "kernels/cpu/quant_matmul.h"
#include "kernels/ref/ref_ops.h"

namespace kairo::kernels::cpu {

const Backend* cpu_backend(Isa isa) {
  if (!isa_supported(isa)) return nullptr;
  // Embedding lookup is one row per token: the reference dequantizer is fast enough there.
#if defined(__aarch64__)
  // The row tiles are the x86 paths' layout (quant_matmul.h), packed by plain C++.
  static const Backend neon_backend{
      "cpu-neon",     neon::matmul,       neon::rms_norm,  neon::rope,     neon::swiglu,   neon::geglu,
      neon::add,      neon::add_bias,     ref::get_row,    neon::kv_write, neon::attention,
      avx512::pack_weights, neon::matmul_shared_input, nullptr, neon::matmul_grouped, neon::add_lora_deltas,
  };
  switch (isa) {
    case Isa::Scalar: return &reference_backend();
    case Isa::Neon: return &neon_backend;
    default: return nullptr;
  }
#elif defined(__x86_64__)
  static const Backend avx2_backend{
      "cpu-avx2",     avx2::matmul,       avx2::rms_norm,  avx2::rope,     avx2::swiglu,   avx2::geglu,
      avx2::add,      avx2::add_bias,     ref::get_row,    avx2::kv_write, avx2::attention,
      avx512::pack_weights, avx2::matmul_shared_input, nullptr, avx2::matmul_grouped, avx2::add_lora_deltas,
  };
  static const Backend avx512_backend{
      "cpu-avx512",   avx512::matmul,   avx512::rms_norm, avx512::rope,     avx512::swiglu, avx512::geglu,
      avx512::add,    avx512::add_bias, ref::get_row,     avx512::kv_write, avx512::attention,
      avx512::pack_weights, avx512::matmul_shared_input, nullptr, avx512::matmul_grouped, avx512::add_lora_deltas,
  };
  static const Backend amx_backend{
      "cpu-amx",      amx::matmul,      avx512::rms_norm, avx512::rope,     avx512::swiglu, avx512::geglu,
      avx512::add,    avx512::add_bias, ref::get_row,     avx512::kv_write, avx512::attention,
      avx512::pack_weights, amx::matmul_shared_input, amx::matmul_relaxed, amx::matmul_grouped, avx512::add_lora_deltas,
  };
  switch (isa) {
    case Isa::Scalar: return &reference_backend();
    case Isa::Avx2: return &avx2_backend;
    case Isa::Avx512: return &avx512_backend;
    case Isa::Amx: return &amx_backend;
    default: return nullptr;
  }
#else
  return isa == Isa::Scalar ? &reference_backend() : nullptr;
#endif
}

}  // namespace kairo::kernels::cpu
