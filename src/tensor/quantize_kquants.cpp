// Reference quantizers of the K-quant super-blocks (Q4_K, Q5_K, Q6_K), following ggml's quantize_row_q*_K_ref:
// per sub-block an error-minimising search for (scale, min) -- make_qkx2_quants for the affine types, make_qx_quants
// for the symmetric Q6_K -- then 6/8-bit quantization of those scales against one f16 super-scale, then the final
// levels recomputed against the quantized scales. Float operations are kept in ggml's order so bytes match.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/half.h"
#include "tensor/quant_math.h"
#include "tensor/quantize.h"

namespace kairo {

using quant::nearest_int;

namespace {

constexpr float kGroupMaxEps = 1e-15f;  // a sub-block whose |x| never exceeds this is treated as all zero

// Affine fit x ~ scale * L + min (min <= 0, L in [0, nmax]) minimising sum w * (scale*L + min - x)^2. Starts from
// the min/max fit, then tries nstep+1 alternative grid spacings (nmax + rmin + rdelta*is levels over the range),
// solving the weighted least squares for (scale, min) given each rounding. Returns scale; *neg_min = -min.
float make_qkx2_quants(int n, int nmax, const float* x, const float* weights, uint8_t* L, float* neg_min,
                       uint8_t* Laux, float rmin, float rdelta, int nstep) {
  float min = x[0];
  float max = x[0];
  float sum_w = weights[0];
  float sum_x = sum_w * x[0];
  for (int i = 1; i < n; ++i) {
    if (x[i] < min) min = x[i];
    if (x[i] > max) max = x[i];
    const float w = weights[i];
    sum_w += w;
    sum_x += w * x[i];
  }
  if (min > 0) min = 0;
  if (max == min) {
    for (int i = 0; i < n; ++i) L[i] = 0;
    *neg_min = -min;
    return 0.f;
  }
  float iscale = static_cast<float>(nmax) / (max - min);
  float scale = 1 / iscale;
  float best_error = 0;
  for (int i = 0; i < n; ++i) {
    const int l = nearest_int(iscale * (x[i] - min));
    L[i] = static_cast<uint8_t>(std::clamp(l, 0, nmax));
    const float diff = scale * static_cast<float>(L[i]) + min - x[i];
    best_error += weights[i] * (diff * diff);
  }
  for (int is = 0; is <= nstep; ++is) {
    iscale = (rmin + rdelta * static_cast<float>(is) + static_cast<float>(nmax)) / (max - min);
    float sum_l = 0, sum_l2 = 0, sum_xl = 0;
    for (int i = 0; i < n; ++i) {
      const int l = std::clamp(nearest_int(iscale * (x[i] - min)), 0, nmax);
      Laux[i] = static_cast<uint8_t>(l);
      const float w = weights[i];
      const float lf = static_cast<float>(l);
      sum_l += w * lf;
      sum_l2 += w * lf * lf;
      sum_xl += w * lf * x[i];
    }
    const float D = sum_w * sum_l2 - sum_l * sum_l;
    if (D > 0) {
      float this_scale = (sum_w * sum_xl - sum_x * sum_l) / D;
      float this_min = (sum_l2 * sum_x - sum_l * sum_xl) / D;
      if (this_min > 0) {
        this_min = 0;
        this_scale = sum_xl / sum_l2;
      }
      float cur_error = 0;
      for (int i = 0; i < n; ++i) {
        const float diff = this_scale * static_cast<float>(Laux[i]) + this_min - x[i];
        cur_error += weights[i] * (diff * diff);
      }
      if (cur_error < best_error) {
        std::memcpy(L, Laux, static_cast<size_t>(n));
        best_error = cur_error;
        scale = this_scale;
        min = this_min;
      }
    }
  }
  *neg_min = -min;
  return scale;
}

// Symmetric fit x ~ scale * (L - nmax), L in [0, 2*nmax), weights x^2 (ggml's rmse_type 1, no importance matrix).
// Starts from the absmax scale mapping the extreme value to -nmax, then tries 18 nearby scales and keeps the one
// with the best weighted least-squares fit.
float make_qx_quants(int n, int nmax, const float* x, int8_t* L) {
  float max = 0;
  float amax = 0;
  for (int i = 0; i < n; ++i) {
    const float ax = std::fabs(x[i]);
    if (ax > amax) {
      amax = ax;
      max = x[i];
    }
  }
  if (amax < kGroupMaxEps) {
    for (int i = 0; i < n; ++i) L[i] = 0;
    return 0.f;
  }
  const float fnmax = static_cast<float>(nmax);
  float iscale = -fnmax / max;
  float sumlx = 0;
  float suml2 = 0;
  for (int i = 0; i < n; ++i) {
    const int l = std::clamp(nearest_int(iscale * x[i]), -nmax, nmax - 1);
    L[i] = static_cast<int8_t>(l + nmax);
    const float w = x[i] * x[i];
    const float lf = static_cast<float>(l);
    sumlx += w * x[i] * lf;
    suml2 += w * lf * lf;
  }
  float scale = suml2 != 0 ? sumlx / suml2 : 0.0f;
  float best = scale * sumlx;
  for (int is = -9; is <= 9; ++is) {
    if (is == 0) continue;
    iscale = -(fnmax + 0.1f * static_cast<float>(is)) / max;
    sumlx = suml2 = 0;
    for (int i = 0; i < n; ++i) {
      const int l = std::clamp(nearest_int(iscale * x[i]), -nmax, nmax - 1);
      const float w = x[i] * x[i];
      const float lf = static_cast<float>(l);
      sumlx += w * x[i] * lf;
      suml2 += w * lf * lf;
    }
    if (suml2 > 0 && sumlx * sumlx > best * suml2) {
      for (int i = 0; i < n; ++i) {
        L[i] = static_cast<int8_t>(nmax + std::clamp(nearest_int(iscale * x[i]), -nmax, nmax - 1));
      }
      scale = sumlx / suml2;
      best = scale * sumlx;
    }
  }
  return scale;
}

// Packs 6-bit scale/min of sub-block j into the 12-byte layout that unpack_scale_min_k4 reads. Sub-blocks 0-3 must
// be packed before 4-7 (the latter OR their top bits into bytes 0-7).
void pack_scale_min_k4(int j, uint8_t ls, uint8_t lm, uint8_t* scales) {
  if (j < 4) {
    scales[j] = ls;
    scales[j + 4] = lm;
  } else {
    scales[j + 4] = static_cast<uint8_t>((ls & 0x0F) | ((lm & 0x0F) << 4));
    scales[j - 4] |= static_cast<uint8_t>((ls >> 4) << 6);
    scales[j] |= static_cast<uint8_t>((lm >> 4) << 6);
  }
}

// Shared by Q4_K (nmax 15) and Q5_K (nmax 31): fills d, dmin, scales and the final levels L[256] in [0, nmax].
template <typename Block>
void quantize_affine_k(const float* x, Block& b, int nmax, float rmin, float rdelta, int nstep, uint8_t* L) {
  constexpr int kSub = kQK_K / 32;
  float mins[kSub];
  float scales[kSub];
  float weights[32];
  uint8_t Laux[32];
  float max_scale = 0;  // scales are positive because the min is subtracted
  float max_min = 0;
  for (int j = 0; j < kSub; ++j) {
    const float* xs = x + 32 * j;
    float sum_x2 = 0;
    for (int l = 0; l < 32; ++l) sum_x2 += xs[l] * xs[l];
    const float av_x = std::sqrt(sum_x2 / 32);
    for (int l = 0; l < 32; ++l) weights[l] = av_x + std::fabs(xs[l]);
    scales[j] = make_qkx2_quants(32, nmax, xs, weights, L + 32 * j, &mins[j], Laux, rmin, rdelta, nstep);
    if (scales[j] > max_scale) max_scale = scales[j];
    if (mins[j] > max_min) max_min = mins[j];
  }

  const float inv_scale = max_scale > 0 ? 63.f / max_scale : 0.f;
  const float inv_min = max_min > 0 ? 63.f / max_min : 0.f;
  std::memset(b.scales, 0, sizeof(b.scales));
  for (int j = 0; j < kSub; ++j) {
    // Wrapping to uint8_t before the clamp is what ggml does (a negative fit becomes a large value, then 63).
    const uint8_t ls = std::min<uint8_t>(63, static_cast<uint8_t>(nearest_int(inv_scale * scales[j])));
    const uint8_t lm = std::min<uint8_t>(63, static_cast<uint8_t>(nearest_int(inv_min * mins[j])));
    pack_scale_min_k4(j, ls, lm, b.scales);
  }
  b.d = f32_to_f16(max_scale / 63.f);
  b.dmin = f32_to_f16(max_min / 63.f);

  const float d_all = f16_to_f32(b.d);
  const float dmin_all = f16_to_f32(b.dmin);
  for (int j = 0; j < kSub; ++j) {
    uint8_t sc, m;
    unpack_scale_min_k4(j, b.scales, &sc, &m);
    const float d = d_all * static_cast<float>(sc);
    if (d == 0.0f) continue;  // keeps the levels of the search (all equivalent: they dequantize to -dmin*m)
    const float dm = dmin_all * static_cast<float>(m);
    for (int ii = 0; ii < 32; ++ii) {
      L[32 * j + ii] = static_cast<uint8_t>(std::clamp(nearest_int((x[32 * j + ii] + dm) / d), 0, nmax));
    }
  }
}

}  // namespace

void quantize_blocks(const float* src, BlockQ4_K* dst, int64_t n_blocks) {
  for (int64_t i = 0; i < n_blocks; ++i, src += kQK_K) {
    uint8_t L[kQK_K];
    BlockQ4_K& b = dst[i];
    quantize_affine_k(src, b, 15, -1.f, 0.1f, 20, L);
    uint8_t* q = b.qs;
    for (int j = 0; j < kQK_K; j += 64, q += 32) {
      for (int l = 0; l < 32; ++l) q[l] = static_cast<uint8_t>(L[j + l] | (L[j + l + 32] << 4));
    }
  }
}

void quantize_blocks(const float* src, BlockQ5_K* dst, int64_t n_blocks) {
  for (int64_t i = 0; i < n_blocks; ++i, src += kQK_K) {
    uint8_t L[kQK_K];
    BlockQ5_K& b = dst[i];
    quantize_affine_k(src, b, 31, -0.5f, 0.1f, 15, L);
    std::memset(b.qh, 0, sizeof(b.qh));
    uint8_t* ql = b.qs;
    uint8_t bit_lo = 1, bit_hi = 2;
    for (int n = 0; n < kQK_K; n += 64, ql += 32, bit_lo <<= 2, bit_hi <<= 2) {
      for (int j = 0; j < 32; ++j) {
        int l1 = L[n + j];
        if (l1 > 15) {
          l1 -= 16;
          b.qh[j] |= bit_lo;
        }
        int l2 = L[n + j + 32];
        if (l2 > 15) {
          l2 -= 16;
          b.qh[j] |= bit_hi;
        }
        ql[j] = static_cast<uint8_t>(l1 | (l2 << 4));
      }
    }
  }
}

void quantize_blocks(const float* src, BlockQ6_K* dst, int64_t n_blocks) {
  constexpr int kSub = kQK_K / 16;
  for (int64_t i = 0; i < n_blocks; ++i, src += kQK_K) {
    int8_t L[kQK_K];
    float scales[kSub];
    BlockQ6_K& b = dst[i];
    float max_scale = 0;
    float max_abs_scale = 0;
    for (int ib = 0; ib < kSub; ++ib) {
      const float scale = make_qx_quants(16, 32, src + 16 * ib, L + 16 * ib);
      scales[ib] = scale;
      if (std::fabs(scale) > max_abs_scale) {
        max_abs_scale = std::fabs(scale);
        max_scale = scale;
      }
    }
    if (max_abs_scale < kGroupMaxEps) {
      std::memset(&b, 0, sizeof(b));
      continue;
    }

    const float iscale = -128.f / max_scale;
    b.d = f32_to_f16(1 / iscale);
    for (int ib = 0; ib < kSub; ++ib) {
      b.scales[ib] = static_cast<int8_t>(std::clamp(nearest_int(iscale * scales[ib]), -128, 127));
    }
    const float d_all = f16_to_f32(b.d);
    for (int j = 0; j < kSub; ++j) {
      const float d = d_all * static_cast<float>(b.scales[j]);
      if (d == 0.0f) continue;
      for (int ii = 0; ii < 16; ++ii) {
        L[16 * j + ii] = static_cast<int8_t>(std::clamp(nearest_int(src[16 * j + ii] / d), -32, 31) + 32);
      }
    }

    uint8_t* ql = b.ql;
    uint8_t* qh = b.qh;
    for (int j = 0; j < kQK_K; j += 128, ql += 64, qh += 32) {
      for (int l = 0; l < 32; ++l) {
        const uint8_t q1 = L[j + l] & 0x0F;
        const uint8_t q2 = L[j + l + 32] & 0x0F;
        const uint8_t q3 = L[j + l + 64] & 0x0F;
        const uint8_t q4 = L[j + l + 96] & 0x0F;
        ql[l] = static_cast<uint8_t>(q1 | (q3 << 4));
        ql[l + 32] = static_cast<uint8_t>(q2 | (q4 << 4));
        qh[l] = static_cast<uint8_t>((L[j + l] >> 4) | ((L[j + l + 32] >> 4) << 2) | ((L[j + l + 64] >> 4) << 4) |
                                     ((L[j + l + 96] >> 4) << 6));
      }
    }
  }
}

}  // namespace kairo
