#include "sampling/speculative_rule.h"

#include <algorithm>

namespace kairo::sampling {

float SparseDistribution::probability(int32_t id) const {
  const auto it = std::lower_bound(ids.begin(), ids.end(), id);
  return it != ids.end() && *it == id ? p[static_cast<size_t>(it - ids.begin())] : 0.0f;
}

int32_t SparseDistribution::draw(double u) const {
  const int64_t i = inverse_cdf(
      p.size(), [&](size_t k) { return static_cast<double>(p[k]); }, u);
  return i < 0 ? -1 : ids[static_cast<size_t>(i)];
}

GuessVerdict verify_guess(const SparseDistribution& p, const SparseDistribution& q, int32_t guess, double u_accept,
                          double u_resample) {
  const double pd = p.probability(guess);
  const double qd = q.probability(guess);
  // u < p(d) / q(d), without dividing (q(d) > 0: the guess was drawn from q).
  if (qd > 0 && u_accept * qd < pd) return {true, guess};
  std::vector<double> residual(p.ids.size());
  for (size_t i = 0; i < p.ids.size(); ++i) {
    residual[i] = std::max(0.0, static_cast<double>(p.p[i]) - q.probability(p.ids[i]));
  }
  const int64_t i = inverse_cdf(
      residual.size(), [&](size_t k) { return residual[k]; }, u_resample);
  // No residual mass: p <= q everywhere, so p equals q up to rounding and a rejection was rounding's; draw from p.
  if (i < 0) return {false, p.draw(u_resample)};
  return {false, p.ids[static_cast<size_t>(i)]};
}

}  // namespace kairo::sampling
