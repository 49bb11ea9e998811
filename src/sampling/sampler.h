#pragma once
// One step of a sampler chain (llama.cpp's llama_sampler_i shape): apply() transforms the candidates, accept()
// observes each token the caller commits to (penalties keep their window from it), reset() forgets the history.
// The factories below build the standard samplers; SamplerChain (sampler_chain.h) runs them in order.
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "sampling/candidates.h"

namespace kairo::sampling {

class Sampler {
 public:
  virtual ~Sampler() = default;
  virtual const char* name() const = 0;
  virtual void apply(Candidates& cands) = 0;
  virtual void accept(int32_t token) {}
  virtual void reset() {}
  // A final selector (dist, greedy): it picks the token rather than transforming the candidates.
  virtual bool selects() const { return false; }
};

// Adds bias to the listed tokens' logits (OpenAI logit_bias). -inf bans a token; ids outside the candidates are
// ignored (validate_config rejects them up front).
std::unique_ptr<Sampler> make_logit_bias(std::vector<std::pair<int32_t, float>> bias);

// Penalties over the last `last_n` accepted tokens (last_n < 0: every accepted token; 0: off). For a token seen
// c > 0 times: repetition (llama.cpp / CTRL): positive logits are divided by `repetition`, non-positive ones
// multiplied; then OpenAI's logit -= c * frequency + presence.
std::unique_ptr<Sampler> make_penalties(int32_t last_n, float repetition, float frequency, float presence);

// Keeps the k most likely tokens (k <= 0: off). Leaves the candidates sorted.
std::unique_ptr<Sampler> make_top_k(int32_t k);
// Nucleus: keeps the smallest sorted prefix whose probability mass reaches p, at least min_keep tokens (p >= 1:
// off).
std::unique_ptr<Sampler> make_top_p(float p, size_t min_keep = 1);
// Keeps tokens with probability >= min_p * p(most likely), at least min_keep tokens (min_p <= 0: off).
std::unique_ptr<Sampler> make_min_p(float min_p, size_t min_keep = 1);
// Divides logits by t. t <= 0 keeps only the most likely token (llama.cpp semantics).
std::unique_ptr<Sampler> make_temperature(float t);

// Final selectors: set Candidates::selected.
// Draws from softmax(logits) with a seeded mt19937_64. The draw uses only the engine's raw 64-bit output (not
// std::uniform_real_distribution, whose algorithm differs between standard libraries), so a seed gives the same
// tokens on every platform. reset() restarts the stream from the seed.
std::unique_ptr<Sampler> make_dist(uint64_t seed);
// Argmax, ties to the lowest token id.
std::unique_ptr<Sampler> make_greedy();

}  // namespace kairo::sampling
