// One-token matmul for the packed legacy layouts (Packing in quant_matmul.h). Per 16-block group: one load of the
// 16 f16 scales, then per 64 columns only unpack + vpdpbusd + one permute/convert/FMA. About a third of the work
// of the GGUF-layout kernel, which leaves decode bound by memory bandwidth rather than by decoding.
// GCC 12 reports its own AVX-512 cast intrinsics (deliberately undefined upper lanes) as maybe-uninitialized.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#include <immintrin.h>

#include "kernels/cpu/quant_matmul.h"

namespace kairo::kernels::avx512 {
namespace {

using cpu::ActQ8;

inline __m512i zero_point_init(const ActQ8& a, int64_t col, int shift) {
  const __m512i s = _mm512_load_si512(a.sum4 + col / 4);
  return _mm512_sub_epi32(_mm512_setzero_si512(), _mm512_sll_epi32(s, _mm_cvtsi32_si128(shift)));
}

// Lanes of chunk k (64 columns = blocks 2k, 2k+1 of the group): [2k x8, 2k+1 x8].
inline __m512i chunk_index(int k) {
  return _mm512_inserti64x4(_mm512_set1_epi32(2 * k), _mm256_set1_epi32(2 * k + 1), 1);
}

template <bool kQ4, int NR>
void packed_rows(const MatrixView& w, const ActQ8& a, float* y, int64_t r) {
  constexpr int kGroupBytes = kQ4 ? kPackQ4_0GroupBytes : kPackQ8_0GroupBytes;
  constexpr int kScaleOffset = kQ4 ? 256 : 512;
  const int64_t n_groups = (w.n_cols / 32 + 15) / 16;
  const uint8_t* rows[NR];
  __m512 acc[NR];
  for (int i = 0; i < NR; ++i) {
    rows[i] = static_cast<const uint8_t*>(w.data) + (r + i) * static_cast<int64_t>(w.row_bytes);
    acc[i] = _mm512_setzero_ps();
  }
  const __m512i m4 = _mm512_set1_epi8(0x0F);
  for (int64_t g = 0; g < n_groups; ++g) {
    const __m512 da = _mm512_loadu_ps(a.d + g * 16);
    __m512 comb[NR];
    for (int i = 0; i < NR; ++i) {
      const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(rows[i] + g * kGroupBytes + kScaleOffset));
      comb[i] = _mm512_mul_ps(_mm512_cvtph_ps(h), da);
    }
    const int64_t col0 = g * kPackGroupCols;
    if constexpr (kQ4) {
      for (int s = 0; s < 4; ++s) {
        const int64_t col = col0 + 128 * s;
        const __m512i aq_lo = _mm512_load_si512(a.q + col);
        const __m512i aq_hi = _mm512_load_si512(a.q + col + 64);
        const __m512i init_lo = zero_point_init(a, col, 3);
        const __m512i init_hi = zero_point_init(a, col + 64, 3);
        const __m512i idx_lo = chunk_index(2 * s), idx_hi = chunk_index(2 * s + 1);
        for (int i = 0; i < NR; ++i) {
          const __m512i z = _mm512_loadu_si512(rows[i] + g * kGroupBytes + 64 * s);
          const __m512i lo = _mm512_and_si512(z, m4);
          const __m512i hi = _mm512_and_si512(_mm512_srli_epi16(z, 4), m4);
          acc[i] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_dpbusd_epi32(init_lo, lo, aq_lo)),
                                   _mm512_permutexvar_ps(idx_lo, comb[i]), acc[i]);
          acc[i] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_dpbusd_epi32(init_hi, hi, aq_hi)),
                                   _mm512_permutexvar_ps(idx_hi, comb[i]), acc[i]);
        }
      }
    } else {
      const __m512i flip = _mm512_set1_epi8(static_cast<char>(0x80));
      for (int k = 0; k < 8; ++k) {
        const int64_t col = col0 + 64 * k;
        const __m512i aq = _mm512_load_si512(a.q + col);
        const __m512i init = zero_point_init(a, col, 7);
        const __m512i idx = chunk_index(k);
        for (int i = 0; i < NR; ++i) {
          const __m512i v = _mm512_xor_si512(_mm512_loadu_si512(rows[i] + g * kGroupBytes + 64 * k), flip);
          acc[i] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_dpbusd_epi32(init, v, aq)),
                                   _mm512_permutexvar_ps(idx, comb[i]), acc[i]);
        }
      }
    }
  }
  for (int i = 0; i < NR; ++i) y[r + i] = _mm512_reduce_add_ps(acc[i]);
}

template <bool kQ4>
void packed_range(const MatrixView& w, const ActQ8& a, float* y, int64_t r0, int64_t r1) {
  int64_t r = r0;
  for (; r + 4 <= r1; r += 4) packed_rows<kQ4, 4>(w, a, y, r);
  for (; r < r1; ++r) packed_rows<kQ4, 1>(w, a, y, r);
}

}  // namespace

GemvFn gemv_packed_kernel(uint32_t packing) {
  switch (packing) {
    case kPackQ4_0x16: return packed_range<true>;
    case kPackQ8_0x16: return packed_range<false>;
    default: return nullptr;
  }
}

}  // namespace kairo::kernels::avx512
