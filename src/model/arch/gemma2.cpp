// Gemma 2: embeddings scaled by sqrt(dim), GELU (tanh) gated feed-forward, RMS norms after attention and after the
// feed-forward, NEOX rope, attention scores soft-capped (attn_logit_softcapping) and the final logits too
// (final_logit_softcapping), every other layer (0, 2, 4 ...) attending over a sliding window of
// attention.sliding_window positions. The 27B model (46 layers) scales queries by 1 / sqrt(dim / heads).
#include "model/arch/arch.h"

namespace kairo::model {
const ArchSpec& gemma2_arch() {
  static const ArchSpec spec = [] {
    ArchSpec s{"gemma2", kernels::RopeStyle::Neox, /*qkv_bias=*/false, 10000.0f};
    s.gemma = true;
    s.swa_pattern = 2;
    s.dim_per_head_scale_layers = 46;
    return s;
  }();
  return spec;
}
}  // namespace kairo::model
