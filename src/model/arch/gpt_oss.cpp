// gpt-oss (OpenAI's open-weight MoE): Q/K/V and output biases, attention sinks (a learned per-head logit in the
// softmax's normalisation), every other layer (0, 2, 4 ...) over a sliding window, YaRN rope (the file's factor 32),
// and a mixture of experts with a router bias, per-expert biases, softmax over the chosen experts' logits (the same
// as the renormalised top-k of the full softmax) and the clamped SwiGLU (alpha 1.702, limit 7). The feed-forward's
// input norm is the tensor named post_attention_norm.
#include "model/arch/arch.h"

namespace kairo::model {
const ArchSpec& gpt_oss_arch() {
  static const ArchSpec spec = [] {
    ArchSpec s{"gpt-oss", kernels::RopeStyle::Neox, /*qkv_bias=*/true, 150000.0f};
    s.experts = ArchSpec::Experts::Required;
    s.swa_pattern = 2;
    s.attn_output_bias = true;
    s.attn_sinks = true;
    s.moe_biases = true;
    s.swiglu_oai = true;
    s.ffn_norm_name = "post_attention_norm";
    return s;
  }();
  return spec;
}
}  // namespace kairo::model
