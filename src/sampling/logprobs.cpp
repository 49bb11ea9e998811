#include "sampling/logprobs.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace kairo::sampling {

namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

float clean(float x) { return std::isnan(x) ? kNegInf : x; }

// logsumexp with the same degenerate cases as Candidates::softmax: +inf entries share the mass; all -inf gives a
// uniform distribution.
struct Normalizer {
  float max_logit = kNegInf;
  double log_sum = 0.0;
  size_t n_max = 0;
  size_t n = 0;

  Normalizer(const float* logits, int32_t n_vocab) : n(static_cast<size_t>(std::max(n_vocab, 0))) {
    for (size_t i = 0; i < n; ++i) max_logit = std::max(max_logit, clean(logits[i]));
    if (std::isinf(max_logit)) {
      for (size_t i = 0; i < n; ++i) n_max += (clean(logits[i]) == max_logit);
      return;
    }
    double sum = 0.0;
    for (size_t i = 0; i < n; ++i) sum += std::exp(static_cast<double>(clean(logits[i])) - max_logit);
    log_sum = std::log(sum);
  }

  float operator()(float logit) const {
    logit = clean(logit);
    if (std::isinf(max_logit)) return logit == max_logit ? -std::log(static_cast<float>(n_max)) : kNegInf;
    return static_cast<float>(static_cast<double>(logit) - max_logit - log_sum);
  }
};

}  // namespace

void log_softmax(const float* logits, int32_t n_vocab, std::vector<float>& out) {
  const Normalizer norm(logits, n_vocab);
  out.resize(norm.n);
  for (size_t i = 0; i < norm.n; ++i) out[i] = norm(logits[i]);
}

std::vector<TokenLogprob> top_logprobs(const float* logits, int32_t n_vocab, int32_t k) {
  const Normalizer norm(logits, n_vocab);
  std::vector<int32_t> ids(norm.n);
  for (size_t i = 0; i < norm.n; ++i) ids[i] = static_cast<int32_t>(i);
  const size_t n_keep = static_cast<size_t>(std::clamp<int32_t>(k, 0, static_cast<int32_t>(norm.n)));
  std::partial_sort(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(n_keep), ids.end(),
                    [&](int32_t a, int32_t b) {
                      const float la = clean(logits[a]), lb = clean(logits[b]);
                      return la != lb ? la > lb : a < b;
                    });
  std::vector<TokenLogprob> out(n_keep);
  for (size_t i = 0; i < n_keep; ++i) out[i] = TokenLogprob{ids[i], norm(logits[ids[i]])};
  return out;
}

float token_logprob(const float* logits, int32_t n_vocab, int32_t token) {
  if (token < 0 || token >= n_vocab) return kNegInf;
  return Normalizer(logits, n_vocab)(logits[token]);
}

}  // namespace kairo::sampling
