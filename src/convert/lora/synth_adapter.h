#pragma once
// `kairo lora synth BASE OUT --rank R`: a random LoRA adapter for a base GGUF, in llama.cpp's adapter format
// (model/lora/adapter_format.h), for tests and benchmarks of adapter serving.
//
// The values are chosen so the adapter changes the outputs noticeably without wrecking them: A ~ N(0, 1/n_in) (so
// A·x keeps x's scale, as Kaiming initialisation does) and B ~ N(0, sigma_b^2) with sigma_b set so that the delta
// scale · B·A has elements of standard deviation `strength` times the RMS of the base tensor's weights (measured on
// up to 64 of its rows). Each adapted projection's output then moves by about `strength` of its size (0.1 by
// default: logits differ visibly, generations stay coherent for a real model). Real fine-tunes start from B = 0 and
// learn a delta of that order.
//
// Deterministic: every row comes from convert/random_rows.h keyed by (seed, tensor name, row). The adapter depends on
// the base only through shapes and those RMS values, so an adapter made from an F16 base also validates against the
// Q8_0 copy of the same model (apply it there: shapes are what the loader checks).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"
#include "model/lora/adapter_format.h"
#include "tensor/dtype.h"

namespace kairo::convert {

struct AdapterSynthOptions {
  int rank = 16;
  std::optional<float> alpha;        // adapter.lora.alpha; default: the rank (scale 1)
  // Projections: q, k, v, o, gate, up, down. Empty: every one the base model has. A named one the base lacks (a MoE
  // model's dense ffn, say) is an error.
  std::vector<std::string> targets;
  DType type = DType::F16;           // F32, F16, BF16 or Q8_0 (rows that do not split into Q8_0 blocks: F16)
  uint64_t seed = 0;
  float strength = 0.1f;             // std of the delta's elements / RMS of the base weights
  int max_rank = model::lora::kDefaultMaxRank;
};

struct AdapterSynthReport {
  std::vector<std::string> adapted;  // base tensor names, layer by layer (model::model_tensors order)
  std::vector<std::string> f16_fallback;  // adapter tensors written in F16 instead of Q8_0
  float alpha = 0;
  uint64_t n_params = 0;
  uint64_t n_bytes = 0;              // file size
};

// "q,k,v,o,gate,up,down" -> the list, or an Error naming an unknown entry.
Result<std::vector<std::string>> parse_lora_targets(const std::string& csv);

// Writes the adapter for the model in `base_path` and loads it back through the adapter loader.
Result<AdapterSynthReport> write_synth_adapter(const std::string& base_path, const std::string& out_path,
                                               const AdapterSynthOptions& options);

}  // namespace kairo::convert
