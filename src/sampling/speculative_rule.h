#pragma once
// The speculative sampling rule (Leviathan et al. 2023; Chen et al. 2023) for guesses drawn from a draft model's
// distribution q: a guess d is accepted with probability min(1, p(d) / q(d)), p being the target model's
// distribution after the request's whole sampler chain; a rejected guess is replaced by a draw from
// norm(max(0, p - q)). Whatever q is, the token that comes out is distributed exactly as p: a q closer to p is only
// accepted more often.
#include <cstdint>
#include <vector>

#include "sampling/inverse_cdf.h"  // uniform01

namespace kairo::sampling {

// A distribution over the tokens a sampler chain left, by ascending id, with probabilities summing to 1.
struct SparseDistribution {
  std::vector<int32_t> ids;
  std::vector<float> p;

  float probability(int32_t id) const;  // 0 for a token not listed
  // The token where u in [0, 1) falls in the cumulative distribution (tokens of probability 0 are never drawn).
  int32_t draw(double u) const;
};

struct GuessVerdict {
  bool accepted = false;
  int32_t token = -1;  // the guess, or the token that replaces it
};

// The rule above for a guess drawn from q; u_accept and u_resample are independent uniforms in [0, 1).
GuessVerdict verify_guess(const SparseDistribution& p, const SparseDistribution& q, int32_t guess, double u_accept,
                          double u_resample);

}  // namespace kairo::sampling
