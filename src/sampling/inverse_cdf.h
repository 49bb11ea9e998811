#pragma once
// Drawing from weights with one uniform (and the uniform itself): the index where u falls in their cumulative sum,
// the same arithmetic for the chain's dist sampler and the speculative rule's draws.
#include <cstddef>
#include <cstdint>
#include <random>

namespace kairo::sampling {

// The index where u in [0, 1) falls in the cumulative weights weight(0..n-1), scaled by their total (rounding may
// leave the weights summing to slightly more or less than 1); weights <= 0 are never chosen. -1 when none is positive.
template <typename Weight>
int64_t inverse_cdf(size_t n, Weight weight, double u) {
  double total = 0.0;
  for (size_t i = 0; i < n; ++i) total += weight(i);
  const double target = u * total;
  double cum = 0.0;
  int64_t last_positive = -1;
  for (size_t i = 0; i < n; ++i) {
    const double w = weight(i);
    if (w <= 0) continue;
    cum += w;
    last_positive = static_cast<int64_t>(i);
    if (target < cum) return last_positive;
  }
  return last_positive;  // rounding left target == total
}

// 53 random bits -> a double in [0, 1): the same on every standard library, unlike std::uniform_real_distribution.
inline double uniform01(std::mt19937_64& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }

}  // namespace kairo::sampling
