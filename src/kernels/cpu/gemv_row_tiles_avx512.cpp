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

// Byte `offset` of a tile's stream, kPrefetchBytes ahead. A call multiplies kTiles consecutive tiles as kTiles
// streams, so past its own tile's end a stream's prefetch goes on into the tile kTiles further (the one it reads
// next), not into the neighbour another stream is already reading.
template <int kTiles, int kAhead = kPrefetchBytes>
inline void prefetch_ahead(const uint8_t* tile, int64_t offset, int64_t tile_bytes) {
  offset += kAhead;
  if (offset >= tile_bytes) offset += (kTiles - 1) * tile_bytes;
  _mm_prefetch(reinterpret_cast<const char*>(tile + offset), _MM_HINT_T0);
}

// K-quant super-blocks (2368 / 3360 bytes a tile) are prefetched further ahead: 3 KiB measured best for both
// (Q4_K / Q6_K GEMV 31-33 / 31-32 GB/s at 2 KiB, 33-34 / 34 at 3 KiB, 32 / 33 at 4 KiB).
constexpr int kKQuantPrefetchBytes = 3072;

// Part j of kParts of the prefetches of the kBytes-byte super-block at `super_offset` of a tile: spread over its
// sub-blocks, because a burst of a whole super-block's lines (37 for Q4_K) fills the line buffers and stalls the
// loop on the prefetches themselves (65 % of the Q4_K kernel's samples sat on them).
template <int64_t kBytes, int kParts, int kTiles>
inline void prefetch_part(const uint8_t* tile, int64_t super_offset, int j, int64_t tile_bytes) {
  constexpr int64_t kLines = (kBytes + 63) / 64;
  for (int64_t l = kLines * j / kParts; l < kLines * (j + 1) / kParts; ++l)
    prefetch_ahead<kTiles, kKQuantPrefetchBytes>(tile, super_offset + 64 * l, tile_bytes);
}

// kTiles consecutive row tiles at once: each block's activation broadcasts (8 loads) and scale serve all of them,
// and several tile streams in flight at once keep more memory reads outstanding (Q4_0 decode GEMV 26.3 -> 31.5
// GB/s on 2 threads, with 4 tiles; 2 gave 30.6). Per row the arithmetic is unchanged.
template <bool kQ4, int kTiles>
void row_tile_gemv(const MatrixView& w, const ActQ8& a, int64_t tile, float* y) {
  constexpr int kValueBytes = kQ4 ? 256 : 512;
  const int64_t n_blocks = w.n_cols / 32;
  const int64_t tile_bytes = kPackTileRows * static_cast<int64_t>(w.row_bytes);
  const uint8_t* values = row_tile_base(w, tile);
  const uint8_t* scales = values + n_blocks * kValueBytes;
  const __m512i m4 = _mm512_set1_epi8(0x0F);
  __m512 acc[kTiles];
  for (auto& v : acc) v = _mm512_setzero_ps();
  for (int64_t b = 0; b < n_blocks; ++b) {
    const int8_t* aq = a.q + 32 * b;
    __m512i act[8];
    for (int k = 0; k < 8; ++k) act[k] = broadcast4(aq + 4 * k);
    const __m512i zero_point = _mm512_set1_epi32((kQ4 ? a.zero_point_q4 : a.zero_point_q8)[b]);
    const __m512 ad = _mm512_set1_ps(a.d[b]);
    for (int t = 0; t < kTiles; ++t) {
      const uint8_t* v = values + t * tile_bytes + b * kValueBytes;
      for (int l = 0; l < kValueBytes; l += 64)
        prefetch_ahead<kTiles>(values + t * tile_bytes, b * kValueBytes + l, tile_bytes);
      __m512i dot = zero_point;
      if constexpr (kQ4) {
        // High nibbles are multiplied in place (16 x their value, no shift), then their sum is divided by 16:
        // exact, and one operation per 64 bytes less than shifting them down first.
        __m512i dot_hi = _mm512_setzero_si512();
        for (int s = 0; s < 4; ++s) {
          const __m512i z = _mm512_loadu_si512(v + 64 * s);
          dot = _mm512_dpbusd_epi32(dot, _mm512_and_si512(z, m4), act[2 * s]);
          dot_hi = _mm512_dpbusd_epi32(dot_hi, _mm512_andnot_si512(m4, z), act[2 * s + 1]);
        }
        dot = _mm512_add_epi32(dot, _mm512_srai_epi32(dot_hi, 4));
      } else {
        for (int k = 0; k < 8; ++k) dot = _mm512_dpbusd_epi32(dot, _mm512_loadu_si512(v + 64 * k), act[k]);
      }
      const __m512 c = _mm512_mul_ps(_mm512_cvtepi32_ps(dot), ad);
      const __m512 dw = _mm512_cvtph_ps(
          _mm256_loadu_si256(reinterpret_cast<const __m256i*>(scales + t * tile_bytes + 32 * b)));
      acc[t] = _mm512_fmadd_ps(c, dw, acc[t]);
    }
  }
  for (int t = 0; t < kTiles; ++t) _mm512_storeu_ps(y + 16 * t, acc[t]);
}

// MXFP4: as the Q4_0 kernel, but each nibble is a code that one vpshufb maps to its doubled E2M1 value + 12
// (unsigned), the dot starts at -12 x the activations' block sum, and the scale is the E8M0 byte's 2^(e - 128).
template <int kTiles>
void mxfp4_row_tile_gemv(const MatrixView& w, const ActQ8& a, int64_t tile, float* y) {
  constexpr int kValueBytes = 256;
  const int64_t n_blocks = w.n_cols / 32;
  const int64_t tile_bytes = kPackTileRows * static_cast<int64_t>(w.row_bytes);
  const uint8_t* values = row_tile_base(w, tile);
  const uint8_t* scales = values + n_blocks * kValueBytes;
  const __m512i m4 = _mm512_set1_epi8(0x0F);
  const __m512i table = mxfp4_value_table();
  __m512 acc[kTiles];
  for (auto& v : acc) v = _mm512_setzero_ps();
  for (int64_t b = 0; b < n_blocks; ++b) {
    const int8_t* aq = a.q + 32 * b;
    __m512i act[8];
    for (int k = 0; k < 8; ++k) act[k] = broadcast4(aq + 4 * k);
    const __m512i zero_point = _mm512_set1_epi32(a.zero_point_mxfp4[b]);
    const __m512 ad = _mm512_set1_ps(a.d[b]);
    for (int t = 0; t < kTiles; ++t) {
      const uint8_t* v = values + t * tile_bytes + b * kValueBytes;
      for (int l = 0; l < kValueBytes; l += 64)
        prefetch_ahead<kTiles>(values + t * tile_bytes, b * kValueBytes + l, tile_bytes);
      __m512i dot = zero_point;
      for (int s = 0; s < 4; ++s) {
        const __m512i z = _mm512_loadu_si512(v + 64 * s);
        const __m512i lo = _mm512_shuffle_epi8(table, _mm512_and_si512(z, m4));
        const __m512i hi = _mm512_shuffle_epi8(table, _mm512_and_si512(_mm512_srli_epi16(z, 4), m4));
        dot = _mm512_dpbusd_epi32(dot, lo, act[2 * s]);
        dot = _mm512_dpbusd_epi32(dot, hi, act[2 * s + 1]);
      }
      const __m512 c = _mm512_mul_ps(_mm512_cvtepi32_ps(dot), ad);
      acc[t] = _mm512_fmadd_ps(c, e8m0_half16_ps(scales + t * tile_bytes + 16 * b), acc[t]);
    }
  }
  for (int t = 0; t < kTiles; ++t) _mm512_storeu_ps(y + 16 * t, acc[t]);
}

// Q4_K: per 32-value sub-block b the dot of its nibbles (no zero point), then acc = fma(c_b, d * sc_b, acc) and the
// min term's slot b % 16 = fma(-(dmin * m_b), s_b, slot): the contract's order, 16 rows in lanes (the slot index is
// a constant per super-block pair). kTiles tiles share the activation loads.
template <int kTiles>
void q4_k_row_tile_gemv(const MatrixView& w, const ActQ8& a, int64_t tile, float* y) {
  const int64_t n_super = w.n_cols / 256;
  const int64_t tile_bytes = kPackTileRows * static_cast<int64_t>(w.row_bytes);
  const uint8_t* base = row_tile_base(w, tile);
  const __m512i m4 = _mm512_set1_epi8(0x0F);
  __m512 acc[kTiles];
  __m512 slot[kTiles][16];
  for (int t = 0; t < kTiles; ++t) {
    acc[t] = _mm512_setzero_ps();
    for (auto& v : slot[t]) v = _mm512_setzero_ps();
  }
  for (int64_t sb = 0; sb < n_super; ++sb) {
    __m512 d[kTiles], dmin[kTiles];
    for (int t = 0; t < kTiles; ++t) {
      d[t] = half16_ps(base + t * tile_bytes + sb * kPackQ4_KSuperBytes + 2048);
      dmin[t] = half16_ps(base + t * tile_bytes + sb * kPackQ4_KSuperBytes + 2080);
    }
    const int half = static_cast<int>(sb % 2);  // slots 8 * half .. 8 * half + 7
    for (int j = 0; j < 8; ++j) {
      const int64_t b = sb * 8 + j;
      const int8_t* aq = a.q + 32 * b;
      __m512i act[8];
      for (int k = 0; k < 8; ++k) act[k] = broadcast4(aq + 4 * k);
      const __m512 ad = _mm512_set1_ps(a.d[b]);
      const __m512 as = _mm512_set1_ps(a.s[b]);
      for (int t = 0; t < kTiles; ++t) {
        const uint8_t* p = base + t * tile_bytes + sb * kPackQ4_KSuperBytes;
        prefetch_part<kPackQ4_KSuperBytes, 8, kTiles>(base + t * tile_bytes, sb * kPackQ4_KSuperBytes, j, tile_bytes);
        const uint8_t* v = p + 256 * j;
        __m512i dot = _mm512_setzero_si512(), dot_hi = _mm512_setzero_si512();
        for (int s = 0; s < 4; ++s) {
          const __m512i z = _mm512_loadu_si512(v + 64 * s);
          dot = _mm512_dpbusd_epi32(dot, _mm512_and_si512(z, m4), act[2 * s]);
          dot_hi = _mm512_dpbusd_epi32(dot_hi, _mm512_andnot_si512(m4, z), act[2 * s + 1]);
        }
        dot = _mm512_add_epi32(dot, _mm512_srai_epi32(dot_hi, 4));
        const __m512 c = _mm512_mul_ps(_mm512_cvtepi32_ps(dot), ad);
        acc[t] = _mm512_fmadd_ps(c, _mm512_mul_ps(bytes16_ps<false>(p + 2112 + 16 * j), d[t]), acc[t]);
        // fma(-(dmin * m_b), s_b, slot) as fnmadd: the same rounding, one operation less.
        const __m512 m = _mm512_mul_ps(bytes16_ps<false>(p + 2240 + 16 * j), dmin[t]);
        if (half == 0) slot[t][j] = _mm512_fnmadd_ps(m, as, slot[t][j]);
        else slot[t][8 + j] = _mm512_fnmadd_ps(m, as, slot[t][8 + j]);
      }
    }
  }
  for (int t = 0; t < kTiles; ++t) _mm512_storeu_ps(y + 16 * t, _mm512_add_ps(acc[t], tree_sum16(slot[t])));
}

// Q6_K: per 16-value sub-block the dot of the 6-bit values (stored + 32) minus 32 x the activations' sum, times the
// scale of the 32-value activation block it lies in, then acc = fma(c_b, d * sc_b, acc). kTiles tiles share the
// activation loads.
template <int kTiles>
void q6_k_row_tile_gemv(const MatrixView& w, const ActQ8& a, int64_t tile, float* y) {
  const int64_t n_super = w.n_cols / 256;
  const int64_t tile_bytes = kPackTileRows * static_cast<int64_t>(w.row_bytes);
  const uint8_t* base = row_tile_base(w, tile);
  __m512 acc[kTiles];
  for (auto& v : acc) v = _mm512_setzero_ps();
  for (int64_t sb = 0; sb < n_super; ++sb) {
    __m512 d[kTiles];
    for (int t = 0; t < kTiles; ++t) d[t] = half16_ps(base + t * tile_bytes + sb * kPackQ6_KSuperBytes + 3072);
    for (int j = 0; j < 16; ++j) {
      const int64_t b = sb * 16 + j;  // 16-value sub-block of the row
      const int8_t* aq = a.q + 16 * b;
      const int32_t asum = a.sum4[4 * b] + a.sum4[4 * b + 1] + a.sum4[4 * b + 2] + a.sum4[4 * b + 3];
      const __m512i zero_point = _mm512_set1_epi32(-32 * asum);
      __m512i act[4];
      for (int k = 0; k < 4; ++k) act[k] = broadcast4(aq + 4 * k);
      const __m512 ad = _mm512_set1_ps(a.d[b / 2]);
      for (int t = 0; t < kTiles; ++t) {
        const uint8_t* p = base + t * tile_bytes + sb * kPackQ6_KSuperBytes;
        prefetch_part<kPackQ6_KSuperBytes, 16, kTiles>(base + t * tile_bytes, sb * kPackQ6_KSuperBytes, j, tile_bytes);
        __m512i q[4];
        q6_k_row_tile_values(p + 192 * j, q);
        __m512i dot = zero_point;
        for (int k = 0; k < 4; ++k) dot = _mm512_dpbusd_epi32(dot, q[k], act[k]);
        const __m512 c = _mm512_mul_ps(_mm512_cvtepi32_ps(dot), ad);
        const __m512 sc = bytes16_ps<true>(p + 3104 + 16 * j);
        acc[t] = _mm512_fmadd_ps(c, _mm512_mul_ps(sc, d[t]), acc[t]);
      }
    }
  }
  for (int t = 0; t < kTiles; ++t) _mm512_storeu_ps(y + 16 * t, acc[t]);
}

// n_tiles row tiles, kMaxTiles (a power of two) at a time while they last.
template <template <int> class Kernel, int kMaxTiles>
void row_tiles_gemv(const MatrixView& w, const ActQ8& a, int64_t tile, int n_tiles, float* y) {
  for (; n_tiles >= kMaxTiles; n_tiles -= kMaxTiles, tile += kMaxTiles, y += 16 * kMaxTiles)
    Kernel<kMaxTiles>::run(w, a, tile, y);
  if constexpr (kMaxTiles > 1)
    if (n_tiles > 0) row_tiles_gemv<Kernel, kMaxTiles / 2>(w, a, tile, n_tiles, y);
}

constexpr int kQ4_KTiles = 2;
constexpr int kQ6_KTiles = 2;

template <int kTiles> struct Q4_0Kernel { static constexpr auto run = row_tile_gemv<true, kTiles>; };
template <int kTiles> struct Q8_0Kernel { static constexpr auto run = row_tile_gemv<false, kTiles>; };
template <int kTiles> struct MXFP4Kernel { static constexpr auto run = mxfp4_row_tile_gemv<kTiles>; };
template <int kTiles> struct Q4_KKernel { static constexpr auto run = q4_k_row_tile_gemv<kTiles>; };
template <int kTiles> struct Q6_KKernel { static constexpr auto run = q6_k_row_tile_gemv<kTiles>; };

}  // namespace

RowTileGemvFn row_tile_gemv_kernel(uint32_t packing) {
  switch (packing) {
    case kPackQ4_0Rows16: return row_tiles_gemv<Q4_0Kernel, 4>;
    case kPackQ8_0Rows16: return row_tiles_gemv<Q8_0Kernel, 4>;
    case kPackMXFP4Rows16: return row_tiles_gemv<MXFP4Kernel, 4>;
    case kPackQ4_KRows16: return row_tiles_gemv<Q4_KKernel, kQ4_KTiles>;
    case kPackQ6_KRows16: return row_tiles_gemv<Q6_KKernel, kQ6_KTiles>;
    default: return nullptr;
  }
}

}  // namespace kairo::kernels::avx512
