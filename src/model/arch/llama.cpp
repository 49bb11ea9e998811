// Llama 2/3, Mistral, TinyLlama, SmolLM: GGUF converters permute Q/K so rope rotates adjacent pairs. Mixtral-style
// files (llama.expert_count > 0) replace the feed-forward with a mixture of experts.
#include "model/arch/arch.h"

namespace kairo::model {
const ArchSpec& llama_arch() {
  static const ArchSpec spec{"llama", kernels::RopeStyle::Normal, /*qkv_bias=*/false, 10000.0f, /*qk_norm=*/false,
                               ArchSpec::Experts::Optional};
  return spec;
}
}  // namespace kairo::model
