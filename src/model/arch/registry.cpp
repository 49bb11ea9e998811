#include <array>
#include <cmath>

#include "model/arch/arch.h"
#include "model/config.h"

namespace kairo::model {

// Each architecture file defines one of these; list it here to make it loadable.
const ArchSpec& llama_arch();
const ArchSpec& qwen2_arch();
const ArchSpec& qwen3_arch();
const ArchSpec& qwen3moe_arch();
const ArchSpec& phi3_arch();
const ArchSpec& gemma2_arch();
const ArchSpec& gemma3_arch();
const ArchSpec& gpt_oss_arch();

namespace {
std::array<const ArchSpec*, 8> all_archs() {
  return {&llama_arch(), &qwen2_arch(),  &qwen3_arch(),  &qwen3moe_arch(),
          &phi3_arch(),  &gemma2_arch(), &gemma3_arch(), &gpt_oss_arch()};
}
}  // namespace

const ArchSpec* find_arch(const std::string& name) {
  for (const ArchSpec* spec : all_archs()) {
    if (spec->name == name) return spec;
  }
  return nullptr;
}

void apply_arch_traits(ModelConfig& c) {
  const ArchSpec* spec = find_arch(c.arch);
  if (!spec) return;
  c.rope.style = spec->rope_style;
  c.qkv_bias = spec->qkv_bias;
  c.qk_norm = spec->qk_norm;
  c.fused_qkv = spec->fused_qkv;
  c.fused_gate_up = spec->fused_gate_up;
  c.long_rope = spec->long_rope;
  c.post_norms = spec->gemma;
  c.ffn_act = spec->gemma ? FfnActivation::GeluTanh : spec->swiglu_oai ? FfnActivation::SwigluOai
                                                                      : FfnActivation::Silu;
  c.attn_output_bias = spec->attn_output_bias;
  c.attn_sinks = spec->attn_sinks;
  c.moe_biases = spec->moe_biases;
  c.ffn_norm_name = spec->ffn_norm_name;
  c.embed_scale = spec->gemma ? std::sqrt(static_cast<float>(c.dim)) : 0.0f;
  c.swa_pattern = spec->swa_pattern;
  const bool by_dim = spec->dim_per_head_scale_layers > 0 && c.n_layers == spec->dim_per_head_scale_layers;
  c.attn_scale = 1.0f / std::sqrt(static_cast<float>(by_dim && c.n_heads > 0 ? c.dim / c.n_heads : c.head_dim));
  c.rope_swa = c.rope;  // read_config then reads the file's own values
  if (spec->swa_rope) {
    c.rope_swa.freq_base = 10000.0f;
    c.rope_swa.freq_scale = 1.0f;
  }
}

std::vector<std::string> supported_arch_names() {
  std::vector<std::string> names;
  for (const ArchSpec* spec : all_archs()) names.push_back(spec->name);
  return names;
}

}  // namespace kairo::model
