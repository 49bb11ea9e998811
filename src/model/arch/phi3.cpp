// Phi-3 / Phi-3.5 / Phi-4-mini: one fused attn_qkv projection (Q, K and V rows one after another) and one fused
// ffn_up holding the gate rows then the up rows, NEOX rope. Split at load into the generic decoder's separate
// matrices, so the forward pass is llama's.
//  - phi3.attention.sliding_window is read and not applied, as llama.cpp does ("Phi SWA is currently disabled":
//    the converters write the value without the per-layer pattern the models were trained with); outputs match
//    llama.cpp's at every length.
//  - Files with long-context rope (rope_factors_long / rope_factors_short, Phi-3-*-128k) are refused by the unused-
//    tensor check until that rope is implemented.
#include "model/arch/arch.h"

namespace kairo::model {
const ArchSpec& phi3_arch() {
  static const ArchSpec spec = [] {
    ArchSpec s{"phi3", kernels::RopeStyle::Neox, /*qkv_bias=*/false, 10000.0f};
    s.fused_qkv = true;
    s.fused_gate_up = true;
    return s;
  }();
  return spec;
}
}  // namespace kairo::model
