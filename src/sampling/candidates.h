#pragma once
// The working set a sampler chain transforms: one entry per token still in play. Samplers shrink it (top-k, top-p,
// min-p), rewrite logits (bias, penalties, temperature) and finally pick one entry (dist, greedy).
#include <cstddef>
#include <cstdint>
#include <vector>

namespace kairo::sampling {

struct TokenData {
  int32_t id = 0;
  float logit = 0.0f;
  float p = 0.0f;  // valid only after softmax()
};

// The chain's total order: logit descending, ties to the lower id. Every reordering sampler uses it, so results
// never depend on std::sort's handling of equal elements.
inline bool precedes(const TokenData& a, const TokenData& b) {
  if (a.logit != b.logit) return a.logit > b.logit;
  return a.id < b.id;
}

struct Candidates {
  std::vector<TokenData> data;
  // True when data is in the chain's total order: logit descending, ties by lower id. Samplers that reorder
  // set it; samplers that rewrite logits clear it.
  bool sorted = false;
  int32_t selected = -1;  // index into data chosen by the final sampler; -1 until then

  // One entry per vocabulary token, data[i].id == i. NaN logits (a broken model row) become -inf so they can
  // never be chosen; +inf is kept and dominates the softmax (see softmax()).
  void reset_from_logits(const float* logits, int32_t n_vocab);

  // Sorts into the total order above; deterministic because no two entries compare equal.
  void sort();
  // Keeps the first n entries of the total order (partial sort).
  void keep_top(size_t n);
  // Fills p from the logits without reordering. +inf logits share all the mass equally; if every logit is -inf
  // (everything banned or NaN) the mass is spread uniformly so the result is still a distribution.
  void softmax();
  // Index of the largest logit, ties to the lowest id. -1 when empty.
  int32_t argmax_index() const;
};

}  // namespace kairo::sampling
