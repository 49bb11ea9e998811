// Reference quantizers of the 32-element block types, following ggml's quantize_row_q*_ref step for step (same
// scale choice, same rounding: truncation of x + 8.5 for Q4_0, roundf for Q8_0) so output bytes match llama.cpp.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/half.h"
#include "tensor/quant_math.h"
#include "tensor/quantize.h"

namespace kairo {

using quant::round_to_int;
using quant::trunc_to_int;

namespace {

// The element of largest magnitude, with its sign (the first one on ties). Symmetric types map it to the most
// negative level (-8 / -16), which has no positive counterpart, so the full range of levels is used.
float signed_absmax(const float* x) {
  float amax = 0.0f, max = 0.0f;
  for (int j = 0; j < kQK; ++j) {
    if (amax < std::fabs(x[j])) {
      amax = std::fabs(x[j]);
      max = x[j];
    }
  }
  return max;
}

void min_max(const float* x, float* out_min, float* out_max) {
  float mn = 3.402823466e+38f, mx = -3.402823466e+38f;
  for (int j = 0; j < kQK; ++j) {
    if (x[j] < mn) mn = x[j];
    if (x[j] > mx) mx = x[j];
  }
  *out_min = mn;
  *out_max = mx;
}

uint8_t clamp_level(int v, int hi) { return static_cast<uint8_t>(std::clamp(v, 0, hi)); }

void store_qh(uint8_t qh[4], uint32_t bits) { std::memcpy(qh, &bits, 4); }

}  // namespace

void quantize_blocks(const float* src, BlockQ4_0* dst, int64_t n_blocks) {
  for (int64_t i = 0; i < n_blocks; ++i, src += kQK) {
    const float d = signed_absmax(src) / -8;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    BlockQ4_0& b = dst[i];
    b.d = f32_to_f16(d);
    for (int j = 0; j < kQK / 2; ++j) {
      const uint8_t q0 = clamp_level(trunc_to_int(src[j] * id + 8.5f), 15);
      const uint8_t q1 = clamp_level(trunc_to_int(src[j + kQK / 2] * id + 8.5f), 15);
      b.qs[j] = static_cast<uint8_t>(q0 | (q1 << 4));
    }
  }
}

void quantize_blocks(const float* src, BlockQ4_1* dst, int64_t n_blocks) {
  for (int64_t i = 0; i < n_blocks; ++i, src += kQK) {
    float mn, mx;
    min_max(src, &mn, &mx);
    const float d = (mx - mn) / 15;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    BlockQ4_1& b = dst[i];
    b.d = f32_to_f16(d);
    b.m = f32_to_f16(mn);
    for (int j = 0; j < kQK / 2; ++j) {
      const uint8_t q0 = clamp_level(trunc_to_int((src[j] - mn) * id + 0.5f), 15);
      const uint8_t q1 = clamp_level(trunc_to_int((src[j + kQK / 2] - mn) * id + 0.5f), 15);
      b.qs[j] = static_cast<uint8_t>(q0 | (q1 << 4));
    }
  }
}

void quantize_blocks(const float* src, BlockQ5_0* dst, int64_t n_blocks) {
  for (int64_t i = 0; i < n_blocks; ++i, src += kQK) {
    const float d = signed_absmax(src) / -16;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    BlockQ5_0& b = dst[i];
    b.d = f32_to_f16(d);
    uint32_t qh = 0;
    for (int j = 0; j < kQK / 2; ++j) {
      const uint8_t q0 = clamp_level(trunc_to_int(src[j] * id + 16.5f), 31);
      const uint8_t q1 = clamp_level(trunc_to_int(src[j + kQK / 2] * id + 16.5f), 31);
      b.qs[j] = static_cast<uint8_t>((q0 & 0x0F) | ((q1 & 0x0F) << 4));
      qh |= static_cast<uint32_t>(q0 >> 4) << j;
      qh |= static_cast<uint32_t>(q1 >> 4) << (j + kQK / 2);
    }
    store_qh(b.qh, qh);
  }
}

void quantize_blocks(const float* src, BlockQ5_1* dst, int64_t n_blocks) {
  for (int64_t i = 0; i < n_blocks; ++i, src += kQK) {
    float mn, mx;
    min_max(src, &mn, &mx);
    const float d = (mx - mn) / 31;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    BlockQ5_1& b = dst[i];
    b.d = f32_to_f16(d);
    b.m = f32_to_f16(mn);
    uint32_t qh = 0;
    for (int j = 0; j < kQK / 2; ++j) {
      // ggml does not clamp here (the top level cannot exceed 31 for finite input); clamping only guards NaN/inf.
      const uint8_t q0 = clamp_level(trunc_to_int((src[j] - mn) * id + 0.5f), 31);
      const uint8_t q1 = clamp_level(trunc_to_int((src[j + kQK / 2] - mn) * id + 0.5f), 31);
      b.qs[j] = static_cast<uint8_t>((q0 & 0x0F) | ((q1 & 0x0F) << 4));
      qh |= static_cast<uint32_t>(q0 >> 4) << j;
      qh |= static_cast<uint32_t>(q1 >> 4) << (j + kQK / 2);
    }
    store_qh(b.qh, qh);
  }
}

void quantize_blocks(const float* src, BlockQ8_0* dst, int64_t n_blocks) {
  for (int64_t i = 0; i < n_blocks; ++i, src += kQK) {
    float amax = 0.0f;
    for (int j = 0; j < kQK; ++j) amax = std::max(amax, std::fabs(src[j]));
    const float d = amax / 127;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    BlockQ8_0& b = dst[i];
    b.d = f32_to_f16(d);
    for (int j = 0; j < kQK; ++j) b.qs[j] = static_cast<int8_t>(std::clamp(round_to_int(src[j] * id), -128, 127));
  }
}

}  // namespace kairo
