// One-token matmul for the row-tile layouts (Packing in quant_matmul.h). Each 64-byte load holds 4 values of each
// of 16 rows, so a vpdpbusd against 4 broadcast activation bytes accumulates 16 rows at once and a tile is one
// sequential stream: per block and tile only the loads, 8 vpdpbusd, one convert, one scale multiply and one FMA.
// That per-row arithmetic is the batch-invariance contract's (quant_matmul.h) with rows in lanes, so no transposes.
// GCC 12 reports its own AVX-512 cast intrinsics (deliberately undefined upper lanes) as maybe-uninitialized.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#include <immintrin.h>

#include <cstring>

#include "kernels/cpu/quant_matmul.h"

namespace kairo::kernels::avx512 {
namespace {

using cpu::ActQ8;

// How far ahead of the values being multiplied the tile's stream is prefetched. The hardware prefetcher alone
// leaves the loads waiting behind the arithmetic; 1-4 KiB ahead measured best (Q4_0 decode +20 %).
constexpr int kPrefetchBytes = 2048;

template <bool kQ4>
void row_tile_gemv(const MatrixView& w, const ActQ8& a, int64_t tile, float* y16) {
  constexpr int kValueBytes = kQ4 ? 256 : 512;
  constexpr int kZeroShift = kQ4 ? 3 : 7;  // zero point of the stored unsigned values: 8 or 128
  const int64_t n_blocks = w.n_cols / 32;
  const uint8_t* values = row_tile_base(w, tile);
  const uint8_t* scales = values + n_blocks * kValueBytes;
  int32_t aq4[8];
  const __m512i m4 = _mm512_set1_epi8(0x0F);
  __m512 acc = _mm512_setzero_ps();
  for (int64_t b = 0; b < n_blocks; ++b) {
    const uint8_t* v = values + b * kValueBytes;
    for (int l = 0; l < kValueBytes; l += 64)
      _mm_prefetch(reinterpret_cast<const char*>(v + l + kPrefetchBytes), _MM_HINT_T0);
    std::memcpy(aq4, a.q + 32 * b, 32);
    __m512i dot = _mm512_set1_epi32(-(a.bsum[b] << kZeroShift));
    if constexpr (kQ4) {
      // High nibbles are multiplied in place (16 x their value, no shift), then their sum is divided by 16: exact,
      // and one operation per 64 bytes less than shifting them down first.
      __m512i dot_hi = _mm512_setzero_si512();
      for (int s = 0; s < 4; ++s) {
        const __m512i z = _mm512_loadu_si512(v + 64 * s);
        dot = _mm512_dpbusd_epi32(dot, _mm512_and_si512(z, m4), _mm512_set1_epi32(aq4[2 * s]));
        dot_hi = _mm512_dpbusd_epi32(dot_hi, _mm512_andnot_si512(m4, z), _mm512_set1_epi32(aq4[2 * s + 1]));
      }
      dot = _mm512_add_epi32(dot, _mm512_srai_epi32(dot_hi, 4));
    } else {
      for (int k = 0; k < 8; ++k)
        dot = _mm512_dpbusd_epi32(dot, _mm512_loadu_si512(v + 64 * k), _mm512_set1_epi32(aq4[k]));
    }
    const __m512 c = _mm512_mul_ps(_mm512_cvtepi32_ps(dot), _mm512_set1_ps(a.d[b]));
    const __m512 dw = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(scales + 32 * b)));
    acc = _mm512_fmadd_ps(c, dw, acc);
  }
  _mm512_storeu_ps(y16, acc);
}

}  // namespace

RowTileGemvFn row_tile_gemv_kernel(uint32_t packing) {
  switch (packing) {
    case kPackQ4_0Rows16: return row_tile_gemv<true>;
    case kPackQ8_0Rows16: return row_tile_gemv<false>;
    default: return nullptr;
  }
}

}  // namespace kairo::kernels::avx512
