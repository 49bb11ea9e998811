// Qwen3-MoE (Qwen3-30B-A3B, Qwen3-235B-A22B): qwen3's attention (per-head Q/K RMS norm, NEOX rope, explicit head
// size) with every layer's feed-forward a mixture of experts: a router over expert_count experts, softmax, the top
// expert_used_count renormalised to sum to one, each expert a SwiGLU of width expert_feed_forward_length.
#include "model/arch/arch.h"

namespace kairo::model {
const ArchSpec& qwen3moe_arch() {
  static const ArchSpec spec{"qwen3moe", kernels::RopeStyle::Neox, /*qkv_bias=*/false, 1000000.0f, /*qk_norm=*/true,
                             ArchSpec::Experts::Required};
  return spec;
}
}  // namespace kairo::model
