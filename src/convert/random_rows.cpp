#include "convert/random_rows.h"

#include <cmath>

namespace kairo::convert {
namespace {

uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Uniform in (-1, 1) from the top 53 bits.
double uniform_pm1(uint64_t& state) {
  return static_cast<double>(splitmix64(state) >> 11) * (2.0 / 9007199254740992.0) - 1.0;
}

}  // namespace

uint64_t tensor_key(const std::string& name) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : name) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

void normal_row(uint64_t seed, uint64_t key, int64_t row, float stddev, float* out, int64_t n) {
  uint64_t state = seed ^ key;
  state = splitmix64(state) + static_cast<uint64_t>(row) * 0xD1B54A32D192ED03ull;
  for (int64_t i = 0; i < n;) {
    double u, v, s;
    do {
      u = uniform_pm1(state);
      v = uniform_pm1(state);
      s = u * u + v * v;
    } while (s >= 1.0 || s == 0.0);
    const double f = std::sqrt(-2.0 * std::log(s) / s) * stddev;
    out[i++] = static_cast<float>(u * f);
    if (i < n) out[i++] = static_cast<float>(v * f);
  }
}

}  // namespace kairo::convert
