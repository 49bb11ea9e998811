// A few tokens (2 to kMaxRowTileTokens) times a legacy row tile (Q4_0 / Q8_0, Packing in quant_matmul.h) with
// VNNI: each block's 16-row values are loaded and decoded once and multiplied by every token, where one GEMV pass
// per token decoded them again each time. Per token and row the arithmetic is the row-tile GEMV's (the
// batch-invariance contract, quant_matmul.h): the same integer dot, then c = float(dot) * da, acc = fma(c, dw, acc)
// in block order, so every token's outputs are bit-identical to the one-token path.
// GCC 12 reports its own AVX-512 cast intrinsics (deliberately undefined upper lanes) as maybe-uninitialized.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#include <immintrin.h>

#include "kernels/cpu/decode_avx512.h"
#include "kernels/cpu/quant_matmul.h"

namespace kairo::kernels::avx512 {
namespace {

using cpu::ActQ8;

// How far ahead of the block being multiplied the tile is prefetched (as the one-token GEMV does). Past the tile's
// end that is the next tile, which the same thread multiplies next (prefetches never fault).
constexpr int kPrefetchBytes = 2048;

// kTok tokens times row tile `tile`: token t's 16 outputs to y + t * y_stride. The dots run k-outer, token-inner, so
// kTok independent vpdpbusd chains are in flight (token-outer left one 8-long chain at a time and measured ~30 %
// slower at 8 tokens).
template <bool kQ4, int kTok>
void row_tile_tokens(const MatrixView& w, const ActQ8* a, int64_t tile, float* y, int64_t y_stride) {
  constexpr int kValueBytes = kQ4 ? 256 : 512;
  constexpr int kZeroShift = kQ4 ? 3 : 7;  // zero point of the stored unsigned values: 8 or 128
  const int64_t n_blocks = w.n_cols / 32;
  const uint8_t* values = row_tile_base(w, tile);
  const uint8_t* scales = values + n_blocks * kValueBytes;
  const __m512i m4 = _mm512_set1_epi8(0x0F);
  __m512 acc[kTok];
  for (auto& v : acc) v = _mm512_setzero_ps();
  for (int64_t b = 0; b < n_blocks; ++b) {
    const uint8_t* v = values + b * kValueBytes;
    for (int l = 0; l < kValueBytes; l += 64) _mm_prefetch(reinterpret_cast<const char*>(v + l + kPrefetchBytes), _MM_HINT_T0);
    // wv[k]: values 4k .. 4k + 3 of the block for the 16 rows, unsigned (stored + zero point).
    __m512i wv[8];
    if constexpr (kQ4) {
      for (int s = 0; s < 4; ++s) {
        const __m512i z = _mm512_loadu_si512(v + 64 * s);
        wv[2 * s] = _mm512_and_si512(z, m4);
        wv[2 * s + 1] = _mm512_and_si512(_mm512_srli_epi16(z, 4), m4);
      }
    } else {
      for (int k = 0; k < 8; ++k) wv[k] = _mm512_loadu_si512(v + 64 * k);
    }
    const __m512 dw = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(scales + 32 * b)));
    __m512i dot[kTok];
#pragma GCC unroll 8
    for (int t = 0; t < kTok; ++t) dot[t] = _mm512_set1_epi32(-(a[t].bsum[b] << kZeroShift));
#pragma GCC unroll 8
    for (int k = 0; k < 8; ++k)
#pragma GCC unroll 8
      for (int t = 0; t < kTok; ++t) dot[t] = _mm512_dpbusd_epi32(dot[t], wv[k], broadcast4(a[t].q + 32 * b + 4 * k));
#pragma GCC unroll 8
    for (int t = 0; t < kTok; ++t)
      acc[t] = _mm512_fmadd_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(dot[t]), _mm512_set1_ps(a[t].d[b])), dw, acc[t]);
  }
  for (int t = 0; t < kTok; ++t) _mm512_storeu_ps(y + t * y_stride, acc[t]);
}

// Tokens in passes of 8 (the most whose accumulators, dots and decoded values fit the 32 vector registers), then 4,
// 2, 1.
template <bool kQ4>
void row_tile_tokens_passes(const MatrixView& w, const ActQ8* a, int n_tokens, int64_t tile, float* y,
                            int64_t y_stride) {
  for (; n_tokens >= 8; n_tokens -= 8, a += 8, y += 8 * y_stride) row_tile_tokens<kQ4, 8>(w, a, tile, y, y_stride);
  if (n_tokens >= 4) {
    row_tile_tokens<kQ4, 4>(w, a, tile, y, y_stride);
    n_tokens -= 4, a += 4, y += 4 * y_stride;
  }
  if (n_tokens >= 2) {
    row_tile_tokens<kQ4, 2>(w, a, tile, y, y_stride);
    n_tokens -= 2, a += 2, y += 2 * y_stride;
  }
  if (n_tokens == 1) row_tile_tokens<kQ4, 1>(w, a, tile, y, y_stride);
}

}  // namespace

RowTileTokensFn row_tile_tokens_kernel(uint32_t packing) {
  switch (packing) {
    case kPackQ4_0Rows16: return row_tile_tokens_passes<true>;
    case kPackQ8_0Rows16: return row_tile_tokens_passes<false>;
    default: return nullptr;
  }
}

}  // namespace kairo::kernels::avx512
