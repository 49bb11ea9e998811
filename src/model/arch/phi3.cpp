// Phi-3 / Phi-3.5 / Phi-4-mini: one fused attn_qkv projection (Q, K and V rows one after another) and one fused
// ffn_up holding the gate rows then the up rows, NEOX rope. Split at load into the generic decoder's separate
// matrices, so the forward pass is llama's.
//  - phi3.attention.sliding_window is read and not applied, as llama.cpp does ("Phi SWA is currently disabled":
//    the converters write the value without the per-layer pattern the models were trained with); outputs match
//    llama.cpp's at every length.
//  - Long-context files (Phi-3-*-128k, Phi-3.5, Phi-4-mini) carry rope_factors_long / rope_factors_short and
//    rope.scaling.attn_factor: the long set divides the rope angles when the model runs at a context above
//    rope.scaling.original_context_length, the short set otherwise, and cos/sin are scaled by the attention factor
//    either way (llama.cpp's behaviour; Hugging Face's LongRoPE picks per sequence length instead).
#include "model/arch/arch.h"

namespace kairo::model {
const ArchSpec& phi3_arch() {
  static const ArchSpec spec = [] {
    ArchSpec s{"phi3", kernels::RopeStyle::Neox, /*qkv_bias=*/false, 10000.0f};
    s.fused_qkv = true;
    s.fused_gate_up = true;
    s.long_rope = true;
    return s;
  }();
  return spec;
}
}  // namespace kairo::model
