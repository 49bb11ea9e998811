// The relaxed many-token matmul of a row-tile-packed weight (Q4_0/Q8_0, Packing in quant_matmul.h) with AMX bf16
// tiles: each row tile's weights are expanded once to bf16(q * d) (the block scale folded in), the activations are
// rounded to bf16, and the tile unit accumulates in f32 over the whole row, so there is no per-block float step at
// all (the exact kernel's cost: every block's int32 tile stored and scaled by the vector units). Each 2 x 2 group of
// token and row tiles reuses every loaded operand twice. The results round differently from the batch-invariance
// contract's (quant_matmul.h): callers use this only where no request asks for that contract.
// GCC 12 reports its own AVX-512 cast intrinsics (deliberately undefined upper lanes) as maybe-uninitialized.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "kernels/cpu/amx_tile_config.h"
#include "kernels/cpu/decode_avx512.h"
#include "kernels/cpu/quant_matmul.h"

namespace kairo::kernels::amx {
namespace {

constexpr int64_t kBlockBytes = 1024;  // one 32-column block of a 16-row tile (either operand) in bf16

// B of one block: the packed block's signed values v[g] ([16 rows][4 values] int8, values 4g..4g+3) times the
// rows' scales, as the B tile [16 value pairs][16 rows][2] bf16 (pair p: values 2p, 2p + 1).
template <bool kQ4>
void expand_block(const uint8_t* values, const uint8_t* scales_f16, uint16_t* b) {
  __m512i v[8];
  avx512::row_tile_signed<kQ4>(values, v);
  const __m512 dw = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(scales_f16)));
  // dw4[m], lane 4i + j: the scale of row 4m + i (the rows of bytes 16m..16m+15 of each v[g]).
  __m512 dw4[4];
  for (int m = 0; m < 4; ++m) {
    const __m512i idx = _mm512_add_epi32(_mm512_set1_epi32(4 * m),
                                         _mm512_srli_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15), 2));
    dw4[m] = _mm512_permutexvar_ps(idx, dw);
  }
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i odd = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
  for (int g = 0; g < 8; ++g) {
    auto scaled = [&](__m128i bytes, int m) {
      return _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(bytes)), dw4[m]);
    };
    const __m512 f0 = scaled(_mm512_castsi512_si128(v[g]), 0);
    const __m512 f1 = scaled(_mm512_extracti32x4_epi32(v[g], 1), 1);
    const __m512 f2 = scaled(_mm512_extracti32x4_epi32(v[g], 2), 2);
    const __m512 f3 = scaled(_mm512_extracti32x4_epi32(v[g], 3), 3);
    // Words of x0: rows 0..7 x values 0..3; of x1: rows 8..15.
    const __m512i x0 = reinterpret_cast<__m512i>(_mm512_cvtne2ps_pbh(f1, f0));
    const __m512i x1 = reinterpret_cast<__m512i>(_mm512_cvtne2ps_pbh(f3, f2));
    _mm512_store_si512(b + 64 * g, _mm512_permutex2var_epi32(x0, even, x1));
    _mm512_store_si512(b + 64 * g + 32, _mm512_permutex2var_epi32(x0, odd, x1));
  }
}

template <bool kQ4>
void expand_row_tile(const MatrixView& w, int64_t tile, uint16_t* b) {
  const int64_t n_blocks = w.n_cols / 32;
  const int64_t value_bytes = kQ4 ? 256 : 512;
  const uint8_t* base = avx512::row_tile_base(w, tile);
  const uint8_t* scales = base + n_blocks * value_bytes;
  for (int64_t blk = 0; blk < n_blocks; ++blk)
    expand_block<kQ4>(base + blk * value_bytes, scales + 32 * blk, b + blk * (kBlockBytes / 2));
}

void configure() {
  TileConfig cfg;
  for (int t = 0; t < 8; ++t) {  // C: 16 tokens x 16 rows f32; A: 16 tokens x 32 bf16; B: 16 pairs x 16 rows x 2
    cfg.rows[t] = 16;
    cfg.colsb[t] = 64;
  }
  load_tile_config(cfg);
}

// C tiles of nt token tiles x nr row tiles (each 1 or 2) over all blocks: C[i][j] in tmm(2i + j), A of token tile i
// in tmm(4 + i), B of row tile j in tmm(6 + j). Then each C goes to out[i][j] (16 tokens x 16 rows).
template <int kNt, int kNr>
void multiply(const uint16_t* a0, const uint16_t* a1, const uint16_t* b0, const uint16_t* b1, int64_t n_blocks,
              float (*out)[2][256]) {
  _tile_zero(0);
  if constexpr (kNr > 1) _tile_zero(1);
  if constexpr (kNt > 1) _tile_zero(2);
  if constexpr (kNt > 1 && kNr > 1) _tile_zero(3);
  constexpr long kStride = 64;
  for (int64_t blk = 0; blk < n_blocks; ++blk) {
    const int64_t off = blk * (kBlockBytes / 2);
    KAIRO_TILE_LOAD(6, b0 + off, kStride, kBlockBytes);
    KAIRO_TILE_LOAD(4, a0 + off, kStride, kBlockBytes);
    _tile_dpbf16ps(0, 4, 6);
    if constexpr (kNr > 1) {
      KAIRO_TILE_LOAD(7, b1 + off, kStride, kBlockBytes);
      _tile_dpbf16ps(1, 4, 7);
    }
    if constexpr (kNt > 1) {
      KAIRO_TILE_LOAD(5, a1 + off, kStride, kBlockBytes);
      _tile_dpbf16ps(2, 5, 6);
      if constexpr (kNr > 1) _tile_dpbf16ps(3, 5, 7);
    }
  }
  KAIRO_TILE_STORE(0, out[0][0], 64, 1024);
  if constexpr (kNr > 1) KAIRO_TILE_STORE(1, out[0][1], 64, 1024);
  if constexpr (kNt > 1) KAIRO_TILE_STORE(2, out[1][0], 64, 1024);
  if constexpr (kNt > 1 && kNr > 1) KAIRO_TILE_STORE(3, out[1][1], 64, 1024);
}

}  // namespace

size_t act_bf16_tiles_bytes(int64_t n_cols, int64_t n_tokens) {
  return static_cast<size_t>((n_tokens + 15) / 16 * (n_cols / 32) * kBlockBytes);
}

void convert_act_bf16(const float* x, int64_t t, int64_t n_cols, uint16_t* a) {
  const int64_t n_blocks = n_cols / 32;
  uint16_t* dst = a + (t / 16 * n_blocks * kBlockBytes + (t % 16) * 64) / 2;
  for (int64_t blk = 0; blk < n_blocks; ++blk) {
    __m512i v = _mm512_setzero_si512();
    if (x != nullptr)
      v = reinterpret_cast<__m512i>(_mm512_cvtne2ps_pbh(_mm512_loadu_ps(x + 32 * blk + 16), _mm512_loadu_ps(x + 32 * blk)));
    _mm512_store_si512(dst + blk * (kBlockBytes / 2), v);
  }
}

size_t row_tile_bf16_b_bytes(int64_t n_cols) { return static_cast<size_t>(2 * (n_cols / 32) * kBlockBytes); }

void gemm_row_tiles_bf16(const MatrixView& w, const uint16_t* a, int64_t n_tokens, int64_t tile0, int64_t tile1,
                         uint16_t* b_scratch, float* y) {
  const int64_t n_blocks = w.n_cols / 32;
  const int64_t row_tile_words = n_blocks * (kBlockBytes / 2);
  const bool q4 = w.packing == avx512::kPackQ4_0Rows16;
  configure();
  const int64_t n_token_tiles = (n_tokens + 15) / 16;
  // Token tiles in groups whose activations stay in L2 (~1 MiB) while this thread's row tiles (expanded once per
  // group) multiply them.
  const int64_t group = std::max<int64_t>(2, (int64_t{1} << 20) / (n_blocks * kBlockBytes));
  alignas(64) float out[2][2][256];
  for (int64_t g0 = 0; g0 < n_token_tiles; g0 += group) {
    const int64_t g1 = std::min(n_token_tiles, g0 + group);
    for (int64_t rt = tile0; rt < tile1; rt += 2) {
      const int nr = rt + 1 < tile1 ? 2 : 1;
      for (int j = 0; j < nr; ++j) {
        if (q4) expand_row_tile<true>(w, rt + j, b_scratch + j * row_tile_words);
        else expand_row_tile<false>(w, rt + j, b_scratch + j * row_tile_words);
      }
      const uint16_t* b0 = b_scratch;
      const uint16_t* b1 = b_scratch + row_tile_words;
      for (int64_t tt = g0; tt < g1; tt += 2) {
        const int nt = tt + 1 < g1 ? 2 : 1;
        const uint16_t* a0 = a + tt * row_tile_words;
        const uint16_t* a1 = a0 + row_tile_words;
        if (nt == 2 && nr == 2) multiply<2, 2>(a0, a1, b0, b1, n_blocks, out);
        else if (nt == 2) multiply<2, 1>(a0, a1, b0, b1, n_blocks, out);
        else if (nr == 2) multiply<1, 2>(a0, a1, b0, b1, n_blocks, out);
        else multiply<1, 1>(a0, a1, b0, b1, n_blocks, out);
        for (int i = 0; i < nt; ++i) {
          const int64_t t0 = 16 * (tt + i);
          const int n_tok = static_cast<int>(std::min<int64_t>(16, n_tokens - t0));
          for (int j = 0; j < nr; ++j) {
            const int64_t r0 = (rt + j) * avx512::kPackTileRows;
            const auto mask = static_cast<__mmask16>((1u << std::min<int64_t>(16, w.n_rows - r0)) - 1);
            for (int k = 0; k < n_tok; ++k)
              _mm512_mask_storeu_ps(y + (t0 + k) * w.n_rows + r0, mask, _mm512_load_ps(out[i][j] + 16 * k));
          }
        }
      }
    }
  }
  _tile_release();
}

}  // namespace kairo::kernels::amx
