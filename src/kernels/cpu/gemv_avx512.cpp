// One-token matmul (GEMV) for quantized weights with AVX-512 VNNI. Decode is bound by memory bandwidth, so each
// weight byte is decoded in registers exactly once: weights become unsigned bytes (stored q), the token's int8
// activations multiply them with vpdpbusd, and the zero point is removed per lane with precomputed activation
// sums (init = -offset * sum4). Per-lane float scales (weight scale x activation scale) turn the int32 lanes into
// the result. Several rows share each activation load.
// GCC 12 reports its own AVX-512 cast intrinsics (deliberately undefined upper lanes) as maybe-uninitialized.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#include <immintrin.h>

#include "kernels/cpu/decode_avx512.h"
#include "kernels/cpu/quant_matmul.h"
#include "tensor/blocks.h"

namespace kairo::kernels::avx512 {
namespace {

using cpu::ActQ8;

inline const uint8_t* row_ptr(const MatrixView& w, int64_t r) {
  return static_cast<const uint8_t*>(w.data) + r * static_cast<int64_t>(w.row_bytes);
}

inline __m512i zero_point_init(const ActQ8& a, int64_t lane, int shift) {
  if (shift < 0) return _mm512_setzero_si512();
  const __m512i s = _mm512_loadu_si512(a.sum4 + lane);
  return _mm512_sub_epi32(_mm512_setzero_si512(), _mm512_sll_epi32(s, _mm_cvtsi32_si128(shift)));
}

template <class T, int NR>
void legacy_rows(const MatrixView& w, const ActQ8& a, float* y, int64_t r) {
  const int64_t nb = w.n_cols / 32;
  const uint8_t* rows[NR];
  __m512 acc[NR];
  __m128 macc[NR];
  for (int i = 0; i < NR; ++i) {
    rows[i] = row_ptr(w, r + i);
    acc[i] = _mm512_setzero_ps();
    macc[i] = _mm_setzero_ps();
  }
  for (int64_t b = 0; b < nb; b += 2) {
    const bool two = b + 1 < nb;
    const __m512i aq = _mm512_load_si512(a.q + b * 32);
    const __m512 dl = _mm512_loadu_ps(a.d_lane + b * 8);
    const __m512i init = zero_point_init(a, b * 8, T::kShift);
    for (int i = 0; i < NR; ++i) {
      const uint8_t* p0 = rows[i] + b * T::kBytes;
      const uint8_t* p1 = two ? p0 + T::kBytes : nullptr;
      const __m512i idot = _mm512_dpbusd_epi32(init, T::weights(p0, p1), aq);
      const __m512 scale = _mm512_mul_ps(half_pair_lanes(p0, p1), dl);
      acc[i] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(idot), scale, acc[i]);
      if constexpr (T::kMin) {
        const __m128 s = _mm_castsi128_ps(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(a.s + b)));
        macc[i] = _mm_fmadd_ps(half_pair(p0 + 2, p1 ? p1 + 2 : nullptr), s, macc[i]);
      }
    }
  }
  for (int i = 0; i < NR; ++i) {
    float sum = _mm512_reduce_add_ps(acc[i]);
    if constexpr (T::kMin) sum += _mm_cvtss_f32(macc[i]) + _mm_cvtss_f32(_mm_shuffle_ps(macc[i], macc[i], 1));
    y[r + i] = sum;
  }
}

template <bool kQ5, int NR>
void k45_rows(const MatrixView& w, const ActQ8& a, float* y, int64_t r) {
  constexpr int kBytes = kQ5 ? sizeof(BlockQ5_K) : sizeof(BlockQ4_K);
  const int64_t nsb = w.n_cols / 256;
  const uint8_t* rows[NR];
  __m512 acc[NR], macc[NR];
  for (int i = 0; i < NR; ++i) {
    rows[i] = row_ptr(w, r + i);
    acc[i] = _mm512_setzero_ps();
    macc[i] = _mm512_setzero_ps();
  }
  for (int64_t sb = 0; sb < nsb; ++sb) {
    // [activation scale of sub-block j (8), activation sum of sub-block j (8)]
    const __m512 act = _mm512_insertf32x8(_mm512_castps256_ps512(_mm256_loadu_ps(a.d + sb * 8)),
                                          _mm256_loadu_ps(a.s + sb * 8), 1);
    __m512 comb[NR];
    __m512i hq[NR];
    for (int i = 0; i < NR; ++i) {
      const uint8_t* p = rows[i] + sb * kBytes;
      comb[i] = _mm512_mul_ps(k4_scale_min_floats(p), act);
      macc[i] = _mm512_mask_add_ps(macc[i], 0xFF00, macc[i], comb[i]);
      if constexpr (kQ5) hq[i] = broadcast_32_bytes(p + 16);
    }
    for (int k = 0; k < 4; k += 2) {
      const __m512i aq0 = _mm512_load_si512(a.q + sb * 256 + 64 * k);
      const __m512i aq1 = _mm512_load_si512(a.q + sb * 256 + 64 * k + 64);
      const __m512i idx0 = _mm512_inserti64x4(_mm512_set1_epi32(2 * k), _mm256_set1_epi32(2 * k + 1), 1);
      const __m512i idx1 = _mm512_inserti64x4(_mm512_set1_epi32(2 * k + 2), _mm256_set1_epi32(2 * k + 3), 1);
      for (int i = 0; i < NR; ++i) {
        const uint8_t* p = rows[i] + sb * kBytes;
        __m512i w0, w1;
        k4_chunk_pair(p + (kQ5 ? 48 : 16), k, &w0, &w1);
        if constexpr (kQ5) {
          w0 = k5_high_bits(w0, hq[i], k);
          w1 = k5_high_bits(w1, hq[i], k + 1);
        }
        const __m512i d0 = _mm512_dpbusd_epi32(_mm512_setzero_si512(), w0, aq0);
        const __m512i d1 = _mm512_dpbusd_epi32(_mm512_setzero_si512(), w1, aq1);
        acc[i] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(d0), _mm512_permutexvar_ps(idx0, comb[i]), acc[i]);
        acc[i] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(d1), _mm512_permutexvar_ps(idx1, comb[i]), acc[i]);
      }
    }
  }
  for (int i = 0; i < NR; ++i) y[r + i] = _mm512_reduce_add_ps(acc[i]) - _mm512_reduce_add_ps(macc[i]);
}

template <int NR>
void q6k_rows(const MatrixView& w, const ActQ8& a, float* y, int64_t r) {
  constexpr int kBytes = sizeof(BlockQ6_K);
  const int64_t nsb = w.n_cols / 256;
  const uint8_t* rows[NR];
  __m512 acc[NR];
  for (int i = 0; i < NR; ++i) {
    rows[i] = row_ptr(w, r + i);
    acc[i] = _mm512_setzero_ps();
  }
  for (int64_t sb = 0; sb < nsb; ++sb) {
    __m512 sc[NR];
    for (int i = 0; i < NR; ++i) sc[i] = q6k_scales(rows[i] + sb * kBytes);
    for (int c = 0; c < 4; ++c) {
      const int64_t col = sb * 256 + 64 * c;
      const __m512i aq = _mm512_load_si512(a.q + col);
      const __m512 dl = _mm512_loadu_ps(a.d_lane + col / 4);
      const __m512i init = zero_point_init(a, col / 4, 5);
      // lane l belongs to sub-block 4c + l/4
      const __m512i idx = _mm512_set_epi32(4 * c + 3, 4 * c + 3, 4 * c + 3, 4 * c + 3, 4 * c + 2, 4 * c + 2,
                                           4 * c + 2, 4 * c + 2, 4 * c + 1, 4 * c + 1, 4 * c + 1, 4 * c + 1, 4 * c,
                                           4 * c, 4 * c, 4 * c);
      for (int i = 0; i < NR; ++i) {
        const __m512i idot = _mm512_dpbusd_epi32(init, q6k_chunk(rows[i] + sb * kBytes, c), aq);
        const __m512 scale = _mm512_mul_ps(_mm512_permutexvar_ps(idx, sc[i]), dl);
        acc[i] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(idot), scale, acc[i]);
      }
    }
  }
  for (int i = 0; i < NR; ++i) y[r + i] = _mm512_reduce_add_ps(acc[i]);
}

template <void (*Rows4)(const MatrixView&, const ActQ8&, float*, int64_t),
          void (*Rows1)(const MatrixView&, const ActQ8&, float*, int64_t)>
void gemv_range(const MatrixView& w, const ActQ8& a, float* y, int64_t r0, int64_t r1) {
  int64_t r = r0;
  for (; r + 4 <= r1; r += 4) Rows4(w, a, y, r);
  for (; r < r1; ++r) Rows1(w, a, y, r);
}

}  // namespace

GemvFn gemv_kernel(DType type, uint32_t packing) {
  if (packing != kPackNone) return gemv_packed_kernel(packing);
  switch (type) {
    case DType::Q4_0: return gemv_range<legacy_rows<LegacyQ4_0, 4>, legacy_rows<LegacyQ4_0, 1>>;
    case DType::Q4_1: return gemv_range<legacy_rows<LegacyQ4_1, 4>, legacy_rows<LegacyQ4_1, 1>>;
    case DType::Q5_0: return gemv_range<legacy_rows<LegacyQ5_0, 4>, legacy_rows<LegacyQ5_0, 1>>;
    case DType::Q5_1: return gemv_range<legacy_rows<LegacyQ5_1, 4>, legacy_rows<LegacyQ5_1, 1>>;
    case DType::Q8_0: return gemv_range<legacy_rows<LegacyQ8_0, 4>, legacy_rows<LegacyQ8_0, 1>>;
    case DType::Q4_K: return gemv_range<k45_rows<false, 4>, k45_rows<false, 1>>;
    case DType::Q5_K: return gemv_range<k45_rows<true, 4>, k45_rows<true, 1>>;
    case DType::Q6_K: return gemv_range<q6k_rows<4>, q6k_rows<1>>;
    default: return nullptr;
  }
}

}  // namespace kairo::kernels::avx512
