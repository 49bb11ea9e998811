// Reference MXFP4 quantizer, step for step ggml's quantize_row_mxfp4_ref so the bytes match llama-quantize's: the
// shared exponent is floor(log2(absmax)) - 2 (the largest code, 6 = 12 / 2, then covers absmax), and each value
// takes the code whose scaled value is nearest, the lowest code on ties (codes 0 and 8 are both zero: 0 wins).
#include <algorithm>
#include <cmath>

#include "tensor/quantize.h"

namespace kairo {
namespace {

uint8_t nearest_code(float x, float d) {
  uint8_t best = 0;
  float best_err = std::fabs(static_cast<float>(kMxfp4Values[0]) * d - x);
  for (uint8_t i = 1; i < 16; ++i) {
    const float err = std::fabs(static_cast<float>(kMxfp4Values[i]) * d - x);
    if (err < best_err) {
      best = i;
      best_err = err;
    }
  }
  return best;
}

}  // namespace

void quantize_blocks(const float* src, BlockMXFP4* dst, int64_t n_blocks) {
  for (int64_t i = 0; i < n_blocks; ++i, src += kQK) {
    float amax = 0.0f;
    for (int j = 0; j < kQK; ++j) amax = std::max(amax, std::fabs(src[j]));
    // ggml converts floor(log2f(amax)) - 2 + 127 to uint8_t; absmax below 2^-125 (e would be < 0) wraps there, so
    // clamp instead: such blocks are zeros at any usable scale. NaN/inf inputs: unspecified, as for every type.
    const float e_real = amax > 0.0f ? std::floor(std::log2(amax)) - 2 + 127 : 0.0f;
    const auto e = static_cast<uint8_t>(std::fmin(std::fmax(e_real, 0.0f), 254.0f));
    const float d = mxfp4_scale(e);
    BlockMXFP4& b = dst[i];
    b.e = e;
    for (int j = 0; j < kQK / 2; ++j)
      b.qs[j] = static_cast<uint8_t>(nearest_code(src[j], d) | (nearest_code(src[j + kQK / 2], d) << 4));
  }
}

}  // namespace kairo
