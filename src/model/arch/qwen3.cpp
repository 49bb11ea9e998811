// Qwen3 (dense): no Q/K/V biases, a per-head RMS norm of Q and K before rope (attn_q_norm / attn_k_norm, [head_dim]),
// NEOX-style rope with base 1e6, and a head size from attention.key_length that need not be dim / heads (Qwen3-0.6B:
// 16 heads of 128 on a 1024-wide model).
#include "model/arch/arch.h"

namespace kairo::model {
const ArchSpec& qwen3_arch() {
  static const ArchSpec spec{"qwen3", kernels::RopeStyle::Neox, /*qkv_bias=*/false, 1000000.0f, /*qk_norm=*/true};
  return spec;
}
}  // namespace kairo::model
