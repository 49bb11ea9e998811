// The tokenizer models kairo can load, by `tokenizer.ggml.model`. Adding a model = one .cpp file + one line here.
#include "tokenizer/tokenizer_model.h"

namespace kairo::tokenizer {
namespace {

constexpr ModelEntry kModels[] = {
    {"llama", &create_spm_model},  // SentencePiece (Llama 1/2, Mistral, Phi-3, TinyLlama, llama2.c models)
    {"gpt2", &create_bpe_model},   // byte-level BPE (GPT-2, Llama 3, Qwen2, DeepSeek, Falcon, StarCoder, ...)
};

}  // namespace

const ModelEntry* find_model_entry(std::string_view name) {
  for (const ModelEntry& e : kModels) {
    if (name == e.name) return &e;
  }
  return nullptr;
}

std::string known_model_names() {
  std::string s;
  for (const ModelEntry& e : kModels) {
    if (!s.empty()) s += ", ";
    s += e.name;
  }
  return s;
}

}  // namespace kairo::tokenizer
