// Qwen2 / Qwen2.5: biases on Q/K/V, NEOX-style rope (rotate halves), rope base 1e6 in released models.
#include "model/arch/arch.h"

namespace kairo::model {
const ArchSpec& qwen2_arch() {
  static const ArchSpec spec{"qwen2", kernels::RopeStyle::Neox, /*qkv_bias=*/true, 1000000.0f};
  return spec;
}
}  // namespace kairo::model
