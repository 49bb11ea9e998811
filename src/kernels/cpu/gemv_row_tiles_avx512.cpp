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

#include "kernels/cpu/decode_avx512.h"
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
  const __m512i m4 = _mm512_set1_epi8(0x0F);
  __m512 acc = _mm512_setzero_ps();
  for (int64_t b = 0; b < n_blocks; ++b) {
    const uint8_t* v = values + b * kValueBytes;
    for (int l = 0; l < kValueBytes; l += 64)
      _mm_prefetch(reinterpret_cast<const char*>(v + l + kPrefetchBytes), _MM_HINT_T0);
    const int8_t* aq = a.q + 32 * b;
    __m512i dot = _mm512_set1_epi32(-(a.bsum[b] << kZeroShift));
    if constexpr (kQ4) {
      // High nibbles are multiplied in place (16 x their value, no shift), then their sum is divided by 16: exact,
      // and one operation per 64 bytes less than shifting them down first.
      __m512i dot_hi = _mm512_setzero_si512();
      for (int s = 0; s < 4; ++s) {
        const __m512i z = _mm512_loadu_si512(v + 64 * s);
        dot = _mm512_dpbusd_epi32(dot, _mm512_and_si512(z, m4), broadcast4(aq + 8 * s));
        dot_hi = _mm512_dpbusd_epi32(dot_hi, _mm512_andnot_si512(m4, z), broadcast4(aq + 8 * s + 4));
      }
      dot = _mm512_add_epi32(dot, _mm512_srai_epi32(dot_hi, 4));
    } else {
      for (int k = 0; k < 8; ++k)
        dot = _mm512_dpbusd_epi32(dot, _mm512_loadu_si512(v + 64 * k), broadcast4(aq + 4 * k));
    }
    const __m512 c = _mm512_mul_ps(_mm512_cvtepi32_ps(dot), _mm512_set1_ps(a.d[b]));
    const __m512 dw = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(scales + 32 * b)));
    acc = _mm512_fmadd_ps(c, dw, acc);
  }
  _mm512_storeu_ps(y16, acc);
}

// Q4_K: per 32-value sub-block b the dot of its nibbles (no zero point), then acc = fma(c_b, d * sc_b, acc) and the
// min term's slot b % 16 = fma(-(dmin * m_b), s_b, slot): the contract's order, 16 rows in lanes. One super-block
// pair per step so the slot index is a constant (the slots stay in registers).
void q4_k_row_tile_gemv(const MatrixView& w, const ActQ8& a, int64_t tile, float* y16) {
  const int64_t n_super = w.n_cols / 256;
  const uint8_t* base = row_tile_base(w, tile);
  const __m512i m4 = _mm512_set1_epi8(0x0F);
  __m512 acc = _mm512_setzero_ps();
  __m512 slot[16];
  for (auto& v : slot) v = _mm512_setzero_ps();
  for (int64_t sb = 0; sb < n_super; ++sb) {
    const uint8_t* p = base + sb * kPackQ4_KSuperBytes;
    for (int l = 0; l < kPackQ4_KSuperBytes; l += 64)
      _mm_prefetch(reinterpret_cast<const char*>(p + l + kPrefetchBytes), _MM_HINT_T0);
    const __m512 d = half16_ps(p + 2048);
    const __m512 dmin = half16_ps(p + 2080);
    const int half = static_cast<int>(sb % 2);  // slots 8 * half .. 8 * half + 7
    for (int j = 0; j < 8; ++j) {
      const int64_t b = sb * 8 + j;
      const uint8_t* v = p + 256 * j;
      const int8_t* aq = a.q + 32 * b;
      __m512i dot = _mm512_setzero_si512(), dot_hi = _mm512_setzero_si512();
      for (int s = 0; s < 4; ++s) {
        const __m512i z = _mm512_loadu_si512(v + 64 * s);
        dot = _mm512_dpbusd_epi32(dot, _mm512_and_si512(z, m4), broadcast4(aq + 8 * s));
        dot_hi = _mm512_dpbusd_epi32(dot_hi, _mm512_andnot_si512(m4, z), broadcast4(aq + 8 * s + 4));
      }
      dot = _mm512_add_epi32(dot, _mm512_srai_epi32(dot_hi, 4));
      const __m512 c = _mm512_mul_ps(_mm512_cvtepi32_ps(dot), _mm512_set1_ps(a.d[b]));
      acc = _mm512_fmadd_ps(c, _mm512_mul_ps(bytes16_ps<false>(p + 2112 + 16 * j), d), acc);
      const __m512 m = _mm512_sub_ps(_mm512_setzero_ps(), _mm512_mul_ps(bytes16_ps<false>(p + 2240 + 16 * j), dmin));
      if (half == 0) slot[j] = _mm512_fmadd_ps(m, _mm512_set1_ps(a.s[b]), slot[j]);
      else slot[8 + j] = _mm512_fmadd_ps(m, _mm512_set1_ps(a.s[b]), slot[8 + j]);
    }
  }
  _mm512_storeu_ps(y16, _mm512_add_ps(acc, tree_sum16(slot)));
}

// Q6_K: per 16-value sub-block the dot of the 6-bit values (stored + 32) minus 32 x the activations' sum, times the
// scale of the 32-value activation block it lies in, then acc = fma(c_b, d * sc_b, acc).
void q6_k_row_tile_gemv(const MatrixView& w, const ActQ8& a, int64_t tile, float* y16) {
  const int64_t n_super = w.n_cols / 256;
  const uint8_t* base = row_tile_base(w, tile);
  __m512 acc = _mm512_setzero_ps();
  for (int64_t sb = 0; sb < n_super; ++sb) {
    const uint8_t* p = base + sb * kPackQ6_KSuperBytes;
    for (int l = 0; l < kPackQ6_KSuperBytes; l += 64)
      _mm_prefetch(reinterpret_cast<const char*>(p + l + kPrefetchBytes), _MM_HINT_T0);
    const __m512 d = half16_ps(p + 3072);
    for (int j = 0; j < 16; ++j) {
      const int64_t b = sb * 16 + j;  // 16-value sub-block of the row
      const uint8_t* v = p + 192 * j;
      const int8_t* aq = a.q + 16 * b;
      const int32_t asum = a.sum4[4 * b] + a.sum4[4 * b + 1] + a.sum4[4 * b + 2] + a.sum4[4 * b + 3];
      __m512i q[4];
      q6_k_row_tile_values(v, q);
      __m512i dot = _mm512_set1_epi32(-32 * asum);
      dot = _mm512_dpbusd_epi32(dot, q[0], broadcast4(aq + 0));
      dot = _mm512_dpbusd_epi32(dot, q[1], broadcast4(aq + 4));
      dot = _mm512_dpbusd_epi32(dot, q[2], broadcast4(aq + 8));
      dot = _mm512_dpbusd_epi32(dot, q[3], broadcast4(aq + 12));
      const __m512 c = _mm512_mul_ps(_mm512_cvtepi32_ps(dot), _mm512_set1_ps(a.d[b / 2]));
      const __m512 sc = bytes16_ps<true>(p + 3104 + 16 * j);
      acc = _mm512_fmadd_ps(c, _mm512_mul_ps(sc, d), acc);
    }
  }
  _mm512_storeu_ps(y16, acc);
}

}  // namespace

RowTileGemvFn row_tile_gemv_kernel(uint32_t packing) {
  switch (packing) {
    case kPackQ4_0Rows16: return row_tile_gemv<true>;
    case kPackQ8_0Rows16: return row_tile_gemv<false>;
    case kPackQ4_KRows16: return q4_k_row_tile_gemv;
    case kPackQ6_KRows16: return q6_k_row_tile_gemv;
    default: return nullptr;
  }
}

}  // namespace kairo::kernels::avx512
