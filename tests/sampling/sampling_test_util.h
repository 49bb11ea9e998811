#pragma once
// Builds 4-token (or n-token) candidate sets from probabilities, llama.cpp test-sampling style.
#include <cmath>
#include <limits>
#include <map>
#include <vector>

#include "sampling/candidates.h"
#include "sampling/sampler.h"

namespace kairo::sampling {

inline constexpr float kInf = std::numeric_limits<float>::infinity();

}  // namespace kairo::sampling

namespace kairo::sampling::testing {

inline Candidates from_probs(const std::vector<float>& probs) {
  std::vector<float> logits;
  for (float p : probs) logits.push_back(std::log(p));
  Candidates c;
  c.reset_from_logits(logits.data(), static_cast<int32_t>(logits.size()));
  return c;
}

// Applies the sampler, normalises what is left and returns token id -> probability.
inline std::map<int32_t, float> apply_and_normalise(Sampler& s, Candidates c) {
  s.apply(c);
  c.softmax();
  std::map<int32_t, float> out;
  for (const auto& t : c.data) out[t.id] = t.p;
  return out;
}

}  // namespace kairo::sampling::testing
