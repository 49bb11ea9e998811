#pragma once
// What distinguishes one decoder architecture from another in the generic forward pass. Each supported
// architecture is one file in this folder that fills in an ArchSpec; adding one needs no change to the forward.
#include <string>
#include <vector>

#include "kernels/backend.h"

namespace kairo::model {

struct ArchSpec {
  std::string name;                 // general.architecture value
  kernels::RopeStyle rope_style;
  bool qkv_bias;                    // Q/K/V projections carry biases
  float default_rope_base;
  bool qk_norm = false;             // per-head RMS norm of Q and K before rope (attn_q_norm / attn_k_norm)
  // Mixture-of-experts feed-forward (<arch>.expert_count, ffn_gate_inp + ffn_{gate,up,down}_exps): never, when the
  // metadata says so (llama: Mixtral-style files), or always (qwen3moe).
  enum class Experts { None, Optional, Required } experts = Experts::None;
  // Fused projections, split into their parts at load (row ranges of one tensor, no copy): attn_qkv = Q‖K‖V rows,
  // ffn_up = gate‖up rows (phi3).
  bool fused_qkv = false;
  bool fused_gate_up = false;
  // Long-context rope (phi3's 128k files): rope_factors_long / rope_factors_short, chosen by the context length.
  bool long_rope = false;
  // The gemma family: token embeddings scaled by sqrt(dim), a GELU (tanh) gated feed-forward, and an RMS norm on the
  // output of each sub-block (post_attention_norm, post_ffw_norm) before it joins the residual.
  bool gemma = false;
  // Sliding-window attention: layers l with l % swa_pattern < swa_pattern - 1 attend to the last
  // <arch>.attention.sliding_window positions (0: no windowed layers). swa_rope: those layers have their own rope base
  // (<arch>.rope.freq_base_swa) and no rope scaling (gemma3).
  int swa_pattern = 0;
  bool swa_rope = false;
  // Query scaling 1 / sqrt(dim / heads) instead of 1 / sqrt(head_dim) for the model with this many layers (gemma's
  // 27B models, whose query_pre_attn_scalar is not in the GGUF; llama.cpp keys on the layer count the same way).
  int dim_per_head_scale_layers = 0;
  // gpt-oss: a bias on the attention output, attention sinks (attn_sinks), biases on the router and on every expert,
  // the clamped SwiGLU, and the feed-forward's input norm stored as post_attention_norm (there is no ffn_norm).
  bool attn_output_bias = false;
  bool attn_sinks = false;
  bool moe_biases = false;
  bool swiglu_oai = false;
  const char* ffn_norm_name = "ffn_norm";
};

struct ModelConfig;
// Fills in what the architecture (config.arch, which must be supported) fixes: rope style, QKV bias, Q/K norm, fused
// projections, the gemma traits, query scale, the windowed layers' default rope. Reading a file starts from these;
// configs made without a file (planner presets, kairo synth) get them too.
void apply_arch_traits(ModelConfig& config);

// nullptr when the architecture is not supported.
const ArchSpec* find_arch(const std::string& name);
std::vector<std::string> supported_arch_names();

}  // namespace kairo::model
