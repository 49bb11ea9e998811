#pragma once
// Runs samplers in order over the candidates built from one logits row, llama.cpp's default order:
//   logit bias -> penalties -> top-k -> top-p -> min-p -> temperature -> dist
// Temperature <= 0 replaces the tail with greedy: bias and penalties still apply, the filters cannot change an
// argmax, and no random numbers are drawn, so greedy output is deterministic.
#include <cstdint>
#include <memory>
#include <vector>

#include "sampling/candidates.h"
#include "sampling/sampler.h"
#include "sampling/sampling_config.h"
#include "sampling/speculative_rule.h"

namespace kairo::sampling {

class SamplerChain {
 public:
  SamplerChain() = default;
  // Builds the chain; out-of-range values are treated as "off" (call validate_config first to reject them).
  static SamplerChain from_config(const SamplingConfig& config);
  // The chain a draft model's guesses for a sampled request are drawn through: the request's bias, filters and
  // temperature, without its penalties (a draft keeps no window of accepted tokens) and without a selector (the
  // caller draws from distribution()). Any draft distribution keeps the speculative rule exact; one closer to the
  // request's is accepted more often.
  static SamplerChain draft_filters(const SamplingConfig& config);

  void add(std::unique_ptr<Sampler> sampler) { samplers_.push_back(std::move(sampler)); }
  size_t size() const { return samplers_.size(); }
  const Sampler& at(size_t i) const { return *samplers_[i]; }

  // Samples one token from a logits row of n_vocab floats. Does not accept() it: the caller does, once the token
  // is committed (so a discarded draft token never enters the penalty window).
  int32_t sample(const float* logits, int32_t n_vocab);
  // The distribution sample() would draw from: every sampler before the selector applied to the logits (nothing
  // accepted, no random number drawn). A greedy chain gives its argmax probability 1.
  SparseDistribution distribution(const float* logits, int32_t n_vocab);
  // Applies every sampler to caller-built candidates (tests, custom pipelines).
  void apply(Candidates& cands);
  void accept(int32_t token);
  // Forgets accepted tokens and restarts the random stream from the seed.
  void reset();

  // The seed in use (the drawn one when the config asked for kRandomSeed).
  uint64_t seed() const { return seed_; }

 private:
  std::vector<std::unique_ptr<Sampler>> samplers_;
  Candidates cands_;  // reused between calls to avoid a vocabulary-sized allocation per token
  uint64_t seed_ = 0;
};

}  // namespace kairo::sampling
