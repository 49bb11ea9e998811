#include "plan/model_presets.h"

#include <cctype>

#include "core/format.h"

namespace kairo::plan {
namespace {

struct Shape {
  const char* name;
  const char* description;
  const char* arch;
  int n_layers, dim, n_heads, n_kv_heads, head_dim, ffn_dim, n_vocab, context_length;
  bool tied;
  float rope_base;
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
  c.qkv_bias = c.arch == "qwen2";
  c.rope.n_heads = s.n_heads;
  c.rope.head_dim = s.head_dim;
  c.rope.n_rot = s.head_dim;
  c.rope.freq_base = s.rope_base;
  c.rope.style = c.arch == "qwen2" ? kernels::RopeStyle::Neox : kernels::RopeStyle::Normal;
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
