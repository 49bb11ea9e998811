// Llama 2/3, Mistral, TinyLlama, SmolLM: GGUF converters permute Q/K so rope rotates adjacent pairs.
#include "model/arch/arch.h"

namespace kairo::model {
const ArchSpec& llama_arch() {
  static const ArchSpec spec{"llama", kernels::RopeStyle::Normal, /*qkv_bias=*/false, 10000.0f};
  return spec;
}
}  // namespace kairo::model
