// A few tokens (2 to kMaxRowTileTokens) times a row tile (Q4_0, Q8_0, MXFP4, Q4_K, Q6_K; Packing in quant_matmul.h) with
// VNNI: each block's 16-row values (and scales) are loaded and decoded once and multiplied by every token, where
// one GEMV pass per token decoded them again each time. Per token and row the arithmetic is the row-tile GEMV's
// (gemv_row_tiles_avx512.cpp; the batch-invariance contract, quant_matmul.h): the same integer dots, then the same
// float steps in block order, so every token's outputs are bit-identical to the one-token path.
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

// dot[t] += the kGroups 4-value groups wv (16 rows each) times token t's activations from column `col` on. The loop
// runs group-outer, token-inner, so kTok independent vpdpbusd chains are in flight (token-outer left one 8-long
// chain at a time and measured ~30 % slower at 8 tokens).
template <int kTok, int kGroups>
[[gnu::always_inline]] inline void token_dots(const __m512i* wv, const ActQ8* a, int64_t col, __m512i* dot) {
#pragma GCC unroll 8
  for (int k = 0; k < kGroups; ++k)
#pragma GCC unroll 8
    for (int t = 0; t < kTok; ++t) dot[t] = _mm512_dpbusd_epi32(dot[t], wv[k], broadcast4(a[t].q + col + 4 * k));
}

// kTok tokens times row tile `tile`: token t's 16 outputs to y + t * y_stride.
template <bool kQ4, int kTok>
void row_tile_tokens(const MatrixView& w, const ActQ8* a, int64_t tile, float* y, int64_t y_stride) {
  constexpr int kValueBytes = kQ4 ? 256 : 512;
  const int64_t n_blocks = w.n_cols / 32;
  const uint8_t* values = row_tile_base(w, tile);
  const uint8_t* scales = values + n_blocks * kValueBytes;
  const __m512i m4 = _mm512_set1_epi8(0x0F);
  __m512 acc[kTok];
  for (auto& v : acc) v = _mm512_setzero_ps();
  for (int64_t b = 0; b < n_blocks; ++b) {
    const uint8_t* v = values + b * kValueBytes;
    for (int l = 0; l < kValueBytes; l += 64)
      _mm_prefetch(reinterpret_cast<const char*>(v + l + kPrefetchBytes), _MM_HINT_T0);
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
    for (int t = 0; t < kTok; ++t) dot[t] = _mm512_set1_epi32((kQ4 ? a[t].zero_point_q4 : a[t].zero_point_q8)[b]);
    token_dots<kTok, 8>(wv, a, 32 * b, dot);
#pragma GCC unroll 8
    for (int t = 0; t < kTok; ++t)
      acc[t] = _mm512_fmadd_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(dot[t]), _mm512_set1_ps(a[t].d[b])), dw, acc[t]);
  }
  for (int t = 0; t < kTok; ++t) _mm512_storeu_ps(y + t * y_stride, acc[t]);
}

// MXFP4: the Q4_0 kernel's loop with the codes mapped to values + 12 by one vpshufb, dots starting at -12 x the
// block sum and the E8M0 scales, as mxfp4_row_tile_gemv.
template <int kTok>
void mxfp4_row_tile_tokens(const MatrixView& w, const ActQ8* a, int64_t tile, float* y, int64_t y_stride) {
  constexpr int kValueBytes = 256;
  const int64_t n_blocks = w.n_cols / 32;
  const uint8_t* values = row_tile_base(w, tile);
  const uint8_t* scales = values + n_blocks * kValueBytes;
  const __m512i m4 = _mm512_set1_epi8(0x0F);
  const __m512i table = mxfp4_value_table();
  __m512 acc[kTok];
  for (auto& v : acc) v = _mm512_setzero_ps();
  for (int64_t b = 0; b < n_blocks; ++b) {
    const uint8_t* v = values + b * kValueBytes;
    for (int l = 0; l < kValueBytes; l += 64)
      _mm_prefetch(reinterpret_cast<const char*>(v + l + kPrefetchBytes), _MM_HINT_T0);
    __m512i wv[8];
    for (int s = 0; s < 4; ++s) {
      const __m512i z = _mm512_loadu_si512(v + 64 * s);
      wv[2 * s] = _mm512_shuffle_epi8(table, _mm512_and_si512(z, m4));
      wv[2 * s + 1] = _mm512_shuffle_epi8(table, _mm512_and_si512(_mm512_srli_epi16(z, 4), m4));
    }
    const __m512 dw = e8m0_half16_ps(scales + 16 * b);
    __m512i dot[kTok];
#pragma GCC unroll 8
    for (int t = 0; t < kTok; ++t) dot[t] = _mm512_set1_epi32(a[t].zero_point_mxfp4[b]);
    token_dots<kTok, 8>(wv, a, 32 * b, dot);
#pragma GCC unroll 8
    for (int t = 0; t < kTok; ++t)
      acc[t] = _mm512_fmadd_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(dot[t]), _mm512_set1_ps(a[t].d[b])), dw, acc[t]);
  }
  for (int t = 0; t < kTok; ++t) _mm512_storeu_ps(y + t * y_stride, acc[t]);
}

// Prefetches part j of kParts of the super-block kAhead bytes past `super_block` (the tile's stream; past its end,
// the next tile, which this thread multiplies next): spread over the sub-blocks so they never fill the line
// buffers at once.
template <int64_t kBytes, int kParts>
inline void prefetch_part(const uint8_t* super_block, int j) {
  constexpr int64_t kAhead = 3072;
  constexpr int64_t kLines = (kBytes + 63) / 64;
  for (int64_t l = kLines * j / kParts; l < kLines * (j + 1) / kParts; ++l)
    _mm_prefetch(reinterpret_cast<const char*>(super_block + kAhead + 64 * l), _MM_HINT_T0);
}

// Q4_K: per 32-value sub-block b, acc = fma(float(dot) * da_b, d * sc_b, acc) and min slot b % 16 =
// fma(-(dmin * m_b), s_b, slot), as q4_k_row_tile_gemv. The slots (16 per token) live in memory: in registers they
// would crowd out the dots.
template <int kTok>
void q4_k_row_tile_tokens(const MatrixView& w, const ActQ8* a, int64_t tile, float* y, int64_t y_stride) {
  const int64_t n_super = w.n_cols / 256;
  const uint8_t* base = row_tile_base(w, tile);
  const __m512i m4 = _mm512_set1_epi8(0x0F);
  __m512 acc[kTok];
  alignas(64) float slot[kTok][16][16];
  for (auto& v : acc) v = _mm512_setzero_ps();
  for (int t = 0; t < kTok; ++t)
    for (int i = 0; i < 16; ++i) _mm512_store_ps(slot[t][i], _mm512_setzero_ps());
  for (int64_t sb = 0; sb < n_super; ++sb) {
    const uint8_t* p = base + sb * kPackQ4_KSuperBytes;
    const __m512 d = half16_ps(p + 2048), dmin = half16_ps(p + 2080);
    const int half = static_cast<int>(sb % 2);  // slots 8 * half .. 8 * half + 7
    for (int j = 0; j < 8; ++j) {
      const int64_t b = sb * 8 + j;
      prefetch_part<kPackQ4_KSuperBytes, 8>(p, j);
      __m512i wv[8];
      for (int s = 0; s < 4; ++s) {
        const __m512i z = _mm512_loadu_si512(p + 256 * j + 64 * s);
        wv[2 * s] = _mm512_and_si512(z, m4);
        wv[2 * s + 1] = _mm512_and_si512(_mm512_srli_epi16(z, 4), m4);
      }
      const __m512 scale = _mm512_mul_ps(bytes16_ps<false>(p + 2112 + 16 * j), d);
      const __m512 m = _mm512_mul_ps(bytes16_ps<false>(p + 2240 + 16 * j), dmin);
      __m512i dot[kTok];
#pragma GCC unroll 8
      for (int t = 0; t < kTok; ++t) dot[t] = _mm512_setzero_si512();
      token_dots<kTok, 8>(wv, a, 32 * b, dot);
#pragma GCC unroll 8
      for (int t = 0; t < kTok; ++t) {
        acc[t] = _mm512_fmadd_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(dot[t]), _mm512_set1_ps(a[t].d[b])), scale, acc[t]);
        float* sl = slot[t][8 * half + j];
        _mm512_store_ps(sl, _mm512_fnmadd_ps(m, _mm512_set1_ps(a[t].s[b]), _mm512_load_ps(sl)));
      }
    }
  }
  for (int t = 0; t < kTok; ++t) {
    __m512 slots[16];
    for (int i = 0; i < 16; ++i) slots[i] = _mm512_load_ps(slot[t][i]);
    _mm512_storeu_ps(y + t * y_stride, _mm512_add_ps(acc[t], tree_sum16(slots)));
  }
}

// Q6_K: per 16-value sub-block the dot of the 6-bit values (stored + 32) minus 32 x the activations' sum, then
// acc = fma(float(dot) * da, d * sc, acc) with da the scale of the 32-value activation block, as q6_k_row_tile_gemv.
template <int kTok>
void q6_k_row_tile_tokens(const MatrixView& w, const ActQ8* a, int64_t tile, float* y, int64_t y_stride) {
  const int64_t n_super = w.n_cols / 256;
  const uint8_t* base = row_tile_base(w, tile);
  __m512 acc[kTok];
  for (auto& v : acc) v = _mm512_setzero_ps();
  for (int64_t sb = 0; sb < n_super; ++sb) {
    const uint8_t* p = base + sb * kPackQ6_KSuperBytes;
    const __m512 d = half16_ps(p + 3072);
    for (int j = 0; j < 16; ++j) {
      const int64_t b = sb * 16 + j;  // 16-value sub-block of the row
      prefetch_part<kPackQ6_KSuperBytes, 16>(p, j);
      __m512i q[4];
      q6_k_row_tile_values(p + 192 * j, q);
      const __m512 scale = _mm512_mul_ps(bytes16_ps<true>(p + 3104 + 16 * j), d);
      __m512i dot[kTok];
#pragma GCC unroll 8
      for (int t = 0; t < kTok; ++t) {
        const int32_t* s4 = a[t].sum4 + 4 * b;
        dot[t] = _mm512_set1_epi32(-32 * (s4[0] + s4[1] + s4[2] + s4[3]));
      }
      token_dots<kTok, 4>(q, a, 16 * b, dot);
#pragma GCC unroll 8
      for (int t = 0; t < kTok; ++t)
        acc[t] =
            _mm512_fmadd_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(dot[t]), _mm512_set1_ps(a[t].d[b / 2])), scale, acc[t]);
    }
  }
  for (int t = 0; t < kTok; ++t) _mm512_storeu_ps(y + t * y_stride, acc[t]);
}

template <int kTok> struct Q4_0Kernel { static constexpr auto run = row_tile_tokens<true, kTok>; };
template <int kTok> struct Q8_0Kernel { static constexpr auto run = row_tile_tokens<false, kTok>; };
template <int kTok> struct MXFP4Kernel { static constexpr auto run = mxfp4_row_tile_tokens<kTok>; };
template <int kTok> struct Q4_KKernel { static constexpr auto run = q4_k_row_tile_tokens<kTok>; };
template <int kTok> struct Q6_KKernel { static constexpr auto run = q6_k_row_tile_tokens<kTok>; };

// Tokens in passes of 8 (the most whose accumulators, dots and decoded values fit the 32 vector registers), then one
// pass of the rest: 3 tokens in one pass decode each block once, where passes of 2 and 1 decoded it twice (a mixture
// of experts' batched step runs many experts of 2 to 4 tokens).
template <template <int> class Kernel>
void row_tile_tokens_passes(const MatrixView& w, const ActQ8* a, int n_tokens, int64_t tile, float* y,
                            int64_t y_stride) {
  for (; n_tokens >= 8; n_tokens -= 8, a += 8, y += 8 * y_stride) Kernel<8>::run(w, a, tile, y, y_stride);
  switch (n_tokens) {
    case 7: return Kernel<7>::run(w, a, tile, y, y_stride);
    case 6: return Kernel<6>::run(w, a, tile, y, y_stride);
    case 5: return Kernel<5>::run(w, a, tile, y, y_stride);
    case 4: return Kernel<4>::run(w, a, tile, y, y_stride);
    case 3: return Kernel<3>::run(w, a, tile, y, y_stride);
    case 2: return Kernel<2>::run(w, a, tile, y, y_stride);
    case 1: return Kernel<1>::run(w, a, tile, y, y_stride);
    default: return;
  }
}

}  // namespace

RowTileTokensFn row_tile_tokens_kernel(uint32_t packing) {
  switch (packing) {
    case kPackQ4_0Rows16: return row_tile_tokens_passes<Q4_0Kernel>;
    case kPackQ8_0Rows16: return row_tile_tokens_passes<Q8_0Kernel>;
    case kPackMXFP4Rows16: return row_tile_tokens_passes<MXFP4Kernel>;
    case kPackQ4_KRows16: return row_tile_tokens_passes<Q4_KKernel>;
    case kPackQ6_KRows16: return row_tile_tokens_passes<Q6_KKernel>;
    default: return nullptr;
  }
}

}  // namespace kairo::kernels::avx512
