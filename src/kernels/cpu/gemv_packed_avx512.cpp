// One-token matmul for the packed legacy layouts (Packing in quant_matmul.h). The block-interleaved values meet
// the interleaved activations (ActQ8) so each vpdpbusd lane accumulates one whole block: per 16-block group and
// row only the loads, 8 vpdpbusd and one convert/scale, and the 16 block results go to the tile for gemv_finish.
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

template <bool kQ4, int NR>
void packed_rows(const MatrixView& w, const ActQ8& a, int64_t r, int slot, GemvTile& t) {
  constexpr int kGroupBytes = kQ4 ? kPackQ4_0GroupBytes : kPackQ8_0GroupBytes;
  constexpr int kScaleOffset = kQ4 ? 256 : 512;
  constexpr int kShift = kQ4 ? 3 : 7;  // zero point of the stored unsigned values: 8 or 128
  const int64_t n_groups = (w.n_cols / 32 + 15) / 16;
  const uint8_t* rows[NR];
  float* c[NR];
  float* d[NR];
  for (int i = 0; i < NR; ++i) {
    rows[i] = static_cast<const uint8_t*>(w.data) + (r + i) * static_cast<int64_t>(w.row_bytes);
    c[i] = t.c + (slot + i) * t.stride;
    d[i] = t.d + (slot + i) * t.stride;
  }
  const __m512i m4 = _mm512_set1_epi8(0x0F);
  for (int64_t g = 0; g < n_groups; ++g) {
    const __m512i init = _mm512_sub_epi32(_mm512_setzero_si512(),
                                          _mm512_slli_epi32(_mm512_loadu_si512(a.bsum + g * 16), kShift));
    const int8_t* aq = a.q + g * kPackGroupCols;
    __m512i acc[NR];
    for (int i = 0; i < NR; ++i) acc[i] = init;
    if constexpr (kQ4) {
      for (int s = 0; s < 4; ++s) {
        const __m512i aq_lo = _mm512_load_si512(aq + 128 * s);
        const __m512i aq_hi = _mm512_load_si512(aq + 128 * s + 64);
        for (int i = 0; i < NR; ++i) {
          const __m512i z = _mm512_loadu_si512(rows[i] + g * kGroupBytes + 64 * s);
          acc[i] = _mm512_dpbusd_epi32(acc[i], _mm512_and_si512(z, m4), aq_lo);
          acc[i] = _mm512_dpbusd_epi32(acc[i], _mm512_and_si512(_mm512_srli_epi16(z, 4), m4), aq_hi);
        }
      }
    } else {
      for (int k = 0; k < 8; ++k) {
        const __m512i aqk = _mm512_load_si512(aq + 64 * k);
        for (int i = 0; i < NR; ++i)
          acc[i] = _mm512_dpbusd_epi32(acc[i], _mm512_loadu_si512(rows[i] + g * kGroupBytes + 64 * k), aqk);
      }
    }
    const __m512 da = _mm512_loadu_ps(a.d + g * 16);
    for (int i = 0; i < NR; ++i) {
      _mm512_storeu_ps(c[i] + g * 16, _mm512_mul_ps(_mm512_cvtepi32_ps(acc[i]), da));
      const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(rows[i] + g * kGroupBytes + kScaleOffset));
      _mm512_storeu_ps(d[i] + g * 16, _mm512_cvtph_ps(h));
    }
  }
}

template <bool kQ4>
void packed_tile(const MatrixView& w, const ActQ8& a, int64_t r0, int n, GemvTile& t) {
  int i = 0;
  for (; i + 4 <= n; i += 4) packed_rows<kQ4, 4>(w, a, r0 + i, i, t);
  for (; i < n; ++i) packed_rows<kQ4, 1>(w, a, r0 + i, i, t);
}

}  // namespace

GemvFn gemv_packed_kernel(uint32_t packing) {
  switch (packing) {
    case kPackQ4_0x16: return packed_tile<true>;
    case kPackQ8_0x16: return packed_tile<false>;
    default: return nullptr;
  }
}

}  // namespace kairo::kernels::avx512
