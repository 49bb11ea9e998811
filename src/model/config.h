#pragma once
// Hyperparameters of a decoder-only transformer, read from GGUF metadata and validated. Pure data: the planner
// reads it from a header-only parse without loading weights.
#include <cstdint>
#include <string>
#include <vector>

#include "core/result.h"
#include "gguf/gguf_file.h"
#include "kernels/backend.h"

namespace kairo::model {

// The gated feed-forward's activation: out = act(gate) * up.
enum class FfnActivation {
  Silu,       // SwiGLU (llama, qwen, phi)
  GeluTanh,   // GeGLU with GELU's tanh form (gemma)
  SwigluOai,  // gpt-oss: min(gate, 7) * sigmoid(1.702 min(gate, 7)) * (clamp(up, -7, 7) + 1)
};

// How an embedding model turns its final hidden states into one vector (<arch>.pooling_type, llama.cpp's numbering):
// none (a generative model), the mean over the input's tokens, the first token's (CLS), the last token's.
enum class Pooling { None = 0, Mean = 1, Cls = 2, Last = 3 };
const char* pooling_name(Pooling p);  // "none", "mean", "cls", "last"

struct ModelConfig {
  std::string arch;          // general.architecture: "llama", "qwen2", "qwen3", "qwen3moe", "phi3", "gemma2", "gemma3", "gpt-oss"
  std::string name;          // general.name (may be empty)
  int n_layers = 0;
  int dim = 0;               // embedding width
  int n_heads = 0;
  int n_kv_heads = 0;
  int head_dim = 0;          // per-head width of Q and K (and V)
  int ffn_dim = 0;
  int n_vocab = 0;
  int context_length = 0;
  float rms_eps = 1e-5f;
  kernels::RopeParams rope;  // n_heads of the Q projection; the forward reuses it for K with n_kv_heads
  // YaRN rope scaling (<arch>.rope.scaling.type = yarn): [n_rot / 2] per-pair frequency divisors blending the
  // interpolated and the original frequency (rope.mscale holds its magnitude correction); empty otherwise.
  std::vector<float> yarn_freq_factors;
  // <arch>.rope.scaling.original_context_length (0: absent): phi3's long-rope factors switch from the short to the
  // long set for contexts above it (ModelWeights::rope_factors_long).
  int64_t rope_original_context = 0;
  bool qkv_bias = false;     // qwen2
  bool qk_norm = false;      // qwen3: per-head RMS norm of Q and K before rope
  bool fused_qkv = false;        // phi3: one attn_qkv tensor (Q, K, V rows), split at load
  bool fused_gate_up = false;    // phi3: ffn_up holds the gate rows then the up rows, split at load
  bool long_rope = false;        // phi3: rope_factors_long / rope_factors_short may be present
  // The gemma family (ArchSpec::gemma) and sliding-window attention.
  float embed_scale = 0;         // > 0: token embeddings multiplied by it (gemma: sqrt(dim))
  bool post_norms = false;       // post_attention_norm / post_ffw_norm on each sub-block's output
  FfnActivation ffn_act = FfnActivation::Silu;  // the gated feed-forward's activation
  bool attn_output_bias = false; // gpt-oss: attn_output.bias
  bool attn_sinks = false;       // gpt-oss: attn_sinks, one logit per query head (kernels::AttentionBatch::sinks)
  bool moe_biases = false;       // gpt-oss: ffn_gate_inp.bias and ffn_{gate,up,down}_exps.bias
  std::string ffn_norm_name = "ffn_norm";  // the feed-forward's input norm (gpt-oss: post_attention_norm)
  float attn_scale = 0;          // query scale (1 / sqrt(head_dim) but for gemma's 27B models)
  float attn_softcap = 0;        // > 0: attention scores soft-capped (<arch>.attn_logit_softcapping)
  float final_softcap = 0;       // > 0: logits soft-capped (<arch>.final_logit_softcapping)
  int sliding_window = 0;        // > 0: windowed layers attend to their last sliding_window positions
  int swa_pattern = 0;           // layers l with l % swa_pattern < swa_pattern - 1 are windowed (0: none)
  kernels::RopeParams rope_swa;  // the windowed layers' rope (gemma3: own base, no scaling; else = rope)
  bool tied_embeddings = false;  // output.weight absent: the token embedding doubles as the output projection
  // Mixture of experts (0 experts: a dense feed-forward of ffn_dim). Each token's feed-forward is the weighted sum of
  // its n_experts_used highest-scoring experts (router softmax, the chosen weights renormalised to sum to one).
  int n_experts = 0;
  int n_experts_used = 0;
  int expert_ffn_dim = 0;   // width of one expert's SwiGLU
  // An embedding model's pooling (Qwen3-Embedding: last, gte-Qwen2: mean): what /v1/embeddings returns. Its
  // attention is causal like every model here (a file declaring <arch>.attention.causal = false is refused).
  Pooling pooling = Pooling::None;

  int q_dim() const { return n_heads * head_dim; }
  int kv_dim() const { return n_kv_heads * head_dim; }
  bool moe() const { return n_experts > 0; }
  int n_windowed_layers() const {
    int n = 0;
    for (int l = 0; l < n_layers; ++l) n += layer_windowed(l);
    return n;
  }
  bool layer_windowed(int l) const { return sliding_window > 0 && swa_pattern > 0 && l % swa_pattern < swa_pattern - 1; }
  const kernels::RopeParams& layer_rope(int l) const { return layer_windowed(l) ? rope_swa : rope; }
};

// "48 layers, dim 2048, 32 heads (4 KV, head dim 128), ffn 6144, 128 experts (8 used, width 768), vocab 151936,
// context 40960, rope NEOX base 1e+06, Q/K norm": the shape for `kairo inspect` and `kairo plan`.
std::string describe_shape(const ModelConfig& config);

// Reads and validates the config of a supported architecture. Errors name the key and what to change.
Result<ModelConfig> read_config(const gguf::File& file);

}  // namespace kairo::model
