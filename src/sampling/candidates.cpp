#include "sampling/candidates.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace kairo::sampling {

void Candidates::reset_from_logits(const float* logits, int32_t n_vocab) {
  data.resize(static_cast<size_t>(std::max(n_vocab, 0)));
  for (int32_t i = 0; i < n_vocab; ++i) {
    const float l = logits[i];
    data[i] = TokenData{i, std::isnan(l) ? -std::numeric_limits<float>::infinity() : l, 0.0f};
  }
  sorted = false;
  selected = -1;
}

void Candidates::sort() {
  if (sorted) return;
  std::sort(data.begin(), data.end(), precedes);
  sorted = true;
}

void Candidates::keep_top(size_t n) {
  if (n >= data.size()) {
    sort();
    return;
  }
  if (!sorted) std::partial_sort(data.begin(), data.begin() + static_cast<std::ptrdiff_t>(n), data.end(), precedes);
  data.resize(n);
  sorted = true;
}

void Candidates::softmax() {
  if (data.empty()) return;
  float max_logit = -std::numeric_limits<float>::infinity();
  for (const auto& t : data) max_logit = std::max(max_logit, t.logit);
  if (std::isinf(max_logit)) {
    // Either some logits are +inf (they take all the mass) or all are -inf (no information: uniform).
    size_t n_max = 0;
    for (const auto& t : data) n_max += (t.logit == max_logit);
    const float share = 1.0f / static_cast<float>(n_max);
    for (auto& t : data) t.p = (t.logit == max_logit) ? share : 0.0f;
    return;
  }
  // Accumulate in double: over a 150k vocabulary float sums drift enough to move a seeded draw.
  double sum = 0.0;
  for (auto& t : data) {
    t.p = std::exp(t.logit - max_logit);
    sum += t.p;
  }
  const double inv = 1.0 / sum;
  for (auto& t : data) t.p = static_cast<float>(t.p * inv);
}

int32_t Candidates::argmax_index() const {
  int32_t best = -1;
  for (size_t i = 0; i < data.size(); ++i) {
    if (best < 0 || precedes(data[i], data[static_cast<size_t>(best)])) best = static_cast<int32_t>(i);
  }
  return best;
}

}  // namespace kairo::sampling
