#pragma once
// llama.cpp's GGUF LoRA adapter format (convert_lora_to_gguf.py writes it, llama_adapter_lora_init reads it), the one
// GGUF users already have. Metadata: general.type = "adapter", adapter.type = "lora", adapter.lora.alpha (float; 0
// or absent: no alpha, the scale is the user's), general.architecture = the base model's. Tensors come in pairs
// named after the base tensor they adapt, in GGUF dims order (dims[0] contiguous):
//   <base>.lora_a   [n_in, rank]    rank rows of n_in: the down projection A
//   <base>.lora_b   [rank, n_out]   n_out rows of rank: the up projection B
// for a base weight <base> of dims [n_in, n_out], so that W' = W + scale · B·A with B·A of dims [n_in, n_out].
// scale = user_scale · alpha / rank, or user_scale when alpha is 0 (llama_adapter_lora_weight::get_scale), with the
// rank read per tensor pair (lora_b's dims[0]).
#include <string_view>

namespace kairo::model::lora {

inline constexpr std::string_view kGeneralTypeKey = "general.type";
inline constexpr std::string_view kGeneralTypeAdapter = "adapter";
inline constexpr std::string_view kAdapterTypeKey = "adapter.type";
inline constexpr std::string_view kAdapterTypeLora = "lora";
inline constexpr std::string_view kAlphaKey = "adapter.lora.alpha";
inline constexpr std::string_view kSuffixA = ".lora_a";
inline constexpr std::string_view kSuffixB = ".lora_b";

// The largest rank accepted unless the caller says otherwise (vLLM caps --max-lora-rank at 512; fine-tunes above a
// few hundred are rare, and a rank near the model width is a full fine-tune that should be merged instead).
inline constexpr int kDefaultMaxRank = 1024;

// The scale of a pair: user_scale · alpha / rank, or user_scale when alpha is 0.
inline float effective_scale(float alpha, int rank, float user_scale) {
  return alpha != 0.0f ? user_scale * alpha / static_cast<float>(rank) : user_scale;
}

}  // namespace kairo::model::lora
