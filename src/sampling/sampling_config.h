#pragma once
// Per-request sampling parameters, as the engine hands them to SamplerChain::from_config.
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "core/result.h"

namespace kairo::sampling {

// Seed value meaning "draw a fresh seed from std::random_device" (the request gave none).
inline constexpr uint64_t kRandomSeed = std::numeric_limits<uint64_t>::max();

struct SamplingConfig {
  float temperature = 1.0f;          // <= 0: greedy (argmax, ties to the lowest id)
  int32_t top_k = 0;                 // <= 0: off
  float top_p = 1.0f;                // >= 1: off
  float min_p = 0.0f;                // <= 0: off
  float repetition_penalty = 1.0f;   // 1: off
  float presence_penalty = 0.0f;     // 0: off
  float frequency_penalty = 0.0f;    // 0: off
  int32_t penalty_last_n = 64;       // window of accepted tokens the penalties look at; 0 off, -1 all
  uint64_t seed = kRandomSeed;
  std::vector<std::pair<int32_t, float>> logit_bias;  // token id -> added to its logit (-inf bans it)
};

// Rejects values no sampler can honour, with a message naming the field and the accepted range.
Status validate_config(const SamplingConfig& config, int32_t n_vocab);

}  // namespace kairo::sampling
