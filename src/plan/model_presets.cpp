#include "plan/model_presets.h"

#include <cctype>

#include "core/format.h"
#include "model/arch/arch.h"

namespace kairo::plan {
namespace {

struct Shape {
  const char* name;
  const char* description;
  const char* arch;
  int n_layers, dim, n_heads, n_kv_heads, head_dim, ffn_dim, n_vocab, context_length;
  bool tied;
  float rope_base;
  int n_experts = 0, n_experts_used = 0, expert_ffn_dim = 0;  // mixture of experts
  int sliding_window = 0;                                      // windowed layers (gemma)
  float attn_softcap = 0, final_softcap = 0;                   // gemma2
  float rope_linear_factor = 1;                                // rope.scaling linear (gemma3 4B+: global layers)
};

// Shapes from each model's published config.json.
constexpr Shape kShapes[] = {
    {"tinyllama-1.1b", "TinyLlama 1.1B Chat v1.0", "llama", 22, 2048, 32, 4, 64, 5632, 32000, 2048, false, 1e4f},
    {"llama-3.2-1b", "Meta Llama 3.2 1B", "llama", 16, 2048, 32, 8, 64, 8192, 128256, 131072, true, 5e5f},
    {"llama-3.2-3b", "Meta Llama 3.2 3B", "llama", 28, 3072, 24, 8, 128, 8192, 128256, 131072, true, 5e5f},
    {"llama-2-7b", "Meta Llama 2 7B", "llama", 32, 4096, 32, 32, 128, 11008, 32000, 4096, false, 1e4f},
    {"mistral-7b", "Mistral 7B v0.1", "llama", 32, 4096, 32, 8, 128, 14336, 32000, 32768, false, 1e4f},
    {"llama-3-8b", "Meta Llama 3 8B", "llama", 32, 4096, 32, 8, 128, 14336, 128256, 8192, false, 5e5f},
    {"llama-3.1-8b", "Meta Llama 3.1 8B", "llama", 32, 4096, 32, 8, 128, 14336, 128256, 131072, false, 5e5f},
    {"llama-3-70b", "Meta Llama 3 70B", "llama", 80, 8192, 64, 8, 128, 28672, 128256, 8192, false, 5e5f},
    {"llama-3.1-70b", "Meta Llama 3.1 70B", "llama", 80, 8192, 64, 8, 128, 28672, 128256, 131072, false, 5e5f},
    {"qwen2.5-0.5b", "Qwen2.5 0.5B", "qwen2", 24, 896, 14, 2, 64, 4864, 151936, 32768, true, 1e6f},
    {"qwen2.5-1.5b", "Qwen2.5 1.5B", "qwen2", 28, 1536, 12, 2, 128, 8960, 151936, 32768, true, 1e6f},
    {"qwen2.5-7b", "Qwen2.5 7B", "qwen2", 28, 3584, 28, 4, 128, 18944, 152064, 32768, false, 1e6f},
    {"qwen3-0.6b", "Qwen3 0.6B", "qwen3", 28, 1024, 16, 8, 128, 3072, 151936, 40960, true, 1e6f},
    {"qwen3-8b", "Qwen3 8B", "qwen3", 36, 4096, 32, 8, 128, 12288, 151936, 40960, false, 1e6f},
    {"qwen3-30b-a3b", "Qwen3 30B-A3B (128 experts, 8 active)", "qwen3moe", 48, 2048, 32, 4, 128, 6144, 151936, 40960,
     false, 1e6f, 128, 8, 768},
    // OLMoE's own architecture (olmoe) is not loadable yet; its shape as qwen3moe is a small real-shaped MoE.
    {"olmoe-1b-7b", "OLMoE 1B-7B's shape as qwen3moe (64 experts, 8 active)", "qwen3moe", 16, 2048, 16, 16, 128, 1024,
     50304, 4096, false, 1e4f, 64, 8, 1024},
    {"phi-3-mini", "Phi-3 mini 4K (3.8B)", "phi3", 32, 3072, 32, 32, 96, 8192, 32064, 4096, false, 1e4f},
    {"gemma-2-2b", "Gemma 2 2B", "gemma2", 26, 2304, 8, 4, 256, 9216, 256000, 8192, true, 1e4f, 0, 0, 0, 4096, 50, 30},
    {"gemma-3-1b", "Gemma 3 1B", "gemma3", 26, 1152, 4, 1, 256, 6912, 262144, 32768, true, 1e6f, 0, 0, 0, 512},
    {"gemma-3-4b", "Gemma 3 4B (text)", "gemma3", 34, 2560, 8, 4, 256, 10240, 262208, 131072, true, 1e6f, 0, 0, 0,
     1024, 0, 0, 8},
    {"gpt-oss-20b", "gpt-oss 20B (32 experts, 4 active)", "gpt-oss", 24, 2880, 64, 8, 64, 2880, 201088, 131072,
     false, 150000.0f, 32, 4, 2880, 128},
    {"mixtral-8x7b", "Mixtral 8x7B v0.1 (8 experts, 2 active)", "llama", 32, 4096, 32, 8, 128, 14336, 32000, 32768,
     false, 1e6f, 8, 2, 14336},
};

ModelPreset make(const Shape& s) {
  ModelPreset p;
  p.name = s.name;
  p.description = s.description;
  model::ModelConfig& c = p.config;
  c.arch = s.arch;
  c.name = s.description;
  c.n_layers = s.n_layers;
  c.dim = s.dim;
  c.n_heads = s.n_heads;
  c.n_kv_heads = s.n_kv_heads;
  c.head_dim = s.head_dim;
  c.ffn_dim = s.ffn_dim;
  c.n_vocab = s.n_vocab;
  c.context_length = s.context_length;
  c.tied_embeddings = s.tied;
  c.n_experts = s.n_experts;
  c.n_experts_used = s.n_experts_used;
  c.expert_ffn_dim = s.expert_ffn_dim;
  c.rope.n_heads = s.n_heads;
  c.rope.head_dim = s.head_dim;
  c.rope.n_rot = s.head_dim;
  c.rope.freq_base = s.rope_base;
  c.rope.freq_scale = 1.0f / s.rope_linear_factor;
  model::apply_arch_traits(c);
  c.sliding_window = s.sliding_window;
  c.attn_softcap = s.attn_softcap;
  c.final_softcap = s.final_softcap;
  return p;
}

}  // namespace

const std::vector<ModelPreset>& model_presets() {
  static const std::vector<ModelPreset> presets = [] {
    std::vector<ModelPreset> v;
    for (const auto& s : kShapes) v.push_back(make(s));
    return v;
  }();
  return presets;
}

Result<ModelPreset> find_preset(const std::string& name) {
  std::string key;
  for (char c : name) key += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const auto& p : model_presets()) {
    if (p.name == key) return p;
  }
  std::string names;
  for (const auto& p : model_presets()) names += (names.empty() ? "" : ", ") + p.name;
  return Error{strprintf("unknown model preset %s; known presets: %s (or pass --model FILE.gguf)",
                         quote_for_error(name).c_str(), names.c_str())};
}

}  // namespace kairo::plan
