// The relaxed many-token matmul (kernels::Numerics::Relaxed) of a row-tile-packed weight (Q4_0, Q8_0, Q4_K, Q6_K:
// Packing in quant_matmul.h) or a float one (F16, BF16, F32 rows) with AMX bf16 tiles. Each row tile's weights are
// expanded once to bf16 of their dequantized values (scales and mins folded in), the activations are rounded to
// bf16, and the tile unit accumulates in f32 over the whole row: no per-block float step at all (the exact kernel's
// cost: every block's int32 tile stored and scaled by the vector units). Each 2 x 2 group of token and row tiles
// uses every loaded operand twice. The results round differently from the batch-invariance contract's
// (quant_matmul.h): callers use this only where no request asks for that contract.
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

// The bf16 B tile of one 32-column block: value (row n, column k) = q * scale[n] (+ offset[n]) for the block's
// 8 groups v[g] of [16 rows][4 values] bytes (values 4g..4g+3; signed, or unsigned when kSigned is false), stored as
// [16 value pairs][16 rows][2] (pair p: values 2p, 2p + 1). Groups 0-3 use scale_lo/offset_lo and 4-7 scale_hi/
// offset_hi (Q6_K's two 16-value sub-blocks; the same vectors otherwise).
template <bool kSigned, bool kOffset>
void store_bf16_block(const __m512i v[8], __m512 scale_lo, __m512 scale_hi, __m512 offset_lo, __m512 offset_hi,
                      uint16_t* b) {
  // Per quarter m of a group vector (bytes 16m..16m+15 = rows 4m..4m+3 x 4 values) the rows' scale in lane 4i + j.
  auto spread = [](__m512 x, __m512 out[4]) {
    const __m512i row_of_lane = _mm512_srli_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15), 2);
    for (int m = 0; m < 4; ++m) out[m] = _mm512_permutexvar_ps(_mm512_add_epi32(_mm512_set1_epi32(4 * m), row_of_lane), x);
  };
  __m512 s4[2][4], o4[2][4];
  spread(scale_lo, s4[0]);
  spread(scale_hi, s4[1]);
  if constexpr (kOffset) {
    spread(offset_lo, o4[0]);
    spread(offset_hi, o4[1]);
  }
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i odd = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
  for (int g = 0; g < 8; ++g) {
    const int h = g / 4;
    auto value = [&](__m128i bytes, int m) {
      const __m512i q = kSigned ? _mm512_cvtepi8_epi32(bytes) : _mm512_cvtepu8_epi32(bytes);
      if constexpr (kOffset) return _mm512_fmadd_ps(_mm512_cvtepi32_ps(q), s4[h][m], o4[h][m]);
      return _mm512_mul_ps(_mm512_cvtepi32_ps(q), s4[h][m]);
    };
    // Through memory: the widening loads then take their quarters straight from L1 (no extract on the shuffle
    // port, which the widenings and the pair permutes already keep busy).
    alignas(64) int8_t bytes[64];
    _mm512_store_si512(bytes, v[g]);
    __asm__ volatile("" : : "m"(bytes));
    const __m512 f0 = value(_mm_load_si128(reinterpret_cast<const __m128i*>(bytes)), 0);
    const __m512 f1 = value(_mm_load_si128(reinterpret_cast<const __m128i*>(bytes + 16)), 1);
    const __m512 f2 = value(_mm_load_si128(reinterpret_cast<const __m128i*>(bytes + 32)), 2);
    const __m512 f3 = value(_mm_load_si128(reinterpret_cast<const __m128i*>(bytes + 48)), 3);
    // Words of x0: rows 0..7 x values 0..3; of x1: rows 8..15.
    const __m512i x0 = reinterpret_cast<__m512i>(_mm512_cvtne2ps_pbh(f1, f0));
    const __m512i x1 = reinterpret_cast<__m512i>(_mm512_cvtne2ps_pbh(f3, f2));
    _mm512_store_si512(b + 64 * g, _mm512_permutex2var_epi32(x0, even, x1));
    _mm512_store_si512(b + 64 * g + 32, _mm512_permutex2var_epi32(x0, odd, x1));
  }
}

// Expanders of a whole row tile into B tiles, one 1 KiB tile per 32 columns (layouts: Packing in quant_matmul.h).
template <bool kQ4>
void expand_legacy(const MatrixView& w, int64_t tile, uint16_t* b) {
  const int64_t n_blocks = w.n_cols / 32;
  constexpr int64_t kValueBytes = kQ4 ? 256 : 512;
  const uint8_t* base = avx512::row_tile_base(w, tile);
  const uint8_t* scales = base + n_blocks * kValueBytes;
  for (int64_t blk = 0; blk < n_blocks; ++blk) {
    __m512i v[8];
    avx512::row_tile_signed<kQ4>(base + blk * kValueBytes, v);
    const __m512 dw = avx512::half16_ps(scales + 32 * blk);
    store_bf16_block<true, false>(v, dw, dw, dw, dw, b + blk * (kBlockBytes / 2));
  }
}

// Q4_K: value = d * sc_j * q - dmin * m_j per 32-value sub-block j.
void expand_q4_k(const MatrixView& w, int64_t tile, uint16_t* b) {
  const uint8_t* base = avx512::row_tile_base(w, tile);
  for (int64_t sb = 0; sb < w.n_cols / 256; ++sb) {
    const uint8_t* p = base + sb * avx512::kPackQ4_KSuperBytes;
    const __m512 d = avx512::half16_ps(p + 2048), dmin = avx512::half16_ps(p + 2080);
    for (int j = 0; j < 8; ++j) {
      __m512i v[8];
      avx512::row_tile_nibbles(p + 256 * j, v);
      const __m512 scale = _mm512_mul_ps(d, avx512::bytes16_ps<false>(p + 2112 + 16 * j));
      const __m512 offset = _mm512_sub_ps(_mm512_setzero_ps(), _mm512_mul_ps(dmin, avx512::bytes16_ps<false>(p + 2240 + 16 * j)));
      store_bf16_block<false, true>(v, scale, scale, offset, offset, b + (8 * sb + j) * (kBlockBytes / 2));
    }
  }
}

// Q6_K: value = d * sc_s * (q - 32) per 16-value sub-block s; a 32-column block holds sub-blocks 2c and 2c + 1.
void expand_q6_k(const MatrixView& w, int64_t tile, uint16_t* b) {
  const uint8_t* base = avx512::row_tile_base(w, tile);
  const __m512i k32 = _mm512_set1_epi8(32);
  for (int64_t sb = 0; sb < w.n_cols / 256; ++sb) {
    const uint8_t* p = base + sb * avx512::kPackQ6_KSuperBytes;
    const __m512 d = avx512::half16_ps(p + 3072);
    for (int c = 0; c < 8; ++c) {
      __m512i v[8];
      avx512::q6_k_row_tile_values(p + 192 * (2 * c), v);
      avx512::q6_k_row_tile_values(p + 192 * (2 * c + 1), v + 4);
      for (auto& x : v) x = _mm512_sub_epi8(x, k32);
      const __m512 s0 = _mm512_mul_ps(d, avx512::bytes16_ps<true>(p + 3104 + 16 * (2 * c)));
      const __m512 s1 = _mm512_mul_ps(d, avx512::bytes16_ps<true>(p + 3104 + 16 * (2 * c + 1)));
      store_bf16_block<true, false>(v, s0, s1, s0, s1, b + (8 * sb + c) * (kBlockBytes / 2));
    }
  }
}

// Float weights (GGUF rows, packing 0): each row's 32 values of a block as bf16 (one vector of 16 value pairs),
// then a 16 x 16 transpose of those pairs gives the B tile. Rows past the matrix are zeros.
template <DType kType>
void expand_float(const MatrixView& w, int64_t tile, uint16_t* b) {
  const int64_t r0 = tile * avx512::kPackTileRows;
  const int n_rows = static_cast<int>(std::min<int64_t>(avx512::kPackTileRows, w.n_rows - r0));
  const auto* base = static_cast<const uint8_t*>(w.data) + r0 * static_cast<int64_t>(w.row_bytes);
  for (int64_t blk = 0; blk < w.n_cols / 32; ++blk) {
    __m512 rows[16], pairs[16];
    for (int r = 0; r < 16; ++r) {
      if (r >= n_rows) {
        rows[r] = _mm512_setzero_ps();
        continue;
      }
      const uint8_t* row = base + r * static_cast<int64_t>(w.row_bytes);
      if constexpr (kType == DType::BF16) {
        rows[r] = _mm512_loadu_ps(row + 64 * blk);
      } else {
        __m512 lo, hi;
        if constexpr (kType == DType::F16) {
          lo = avx512::half16_ps(row + 64 * blk);
          hi = avx512::half16_ps(row + 64 * blk + 32);
        } else {
          lo = _mm512_loadu_ps(row + 128 * blk);
          hi = _mm512_loadu_ps(row + 128 * blk + 64);
        }
        rows[r] = reinterpret_cast<__m512>(_mm512_cvtne2ps_pbh(hi, lo));
      }
    }
    avx512::transpose_16x16(rows, pairs);  // pairs[p] lane r: values 2p, 2p + 1 of row r
    for (int p = 0; p < 16; ++p) _mm512_store_ps(reinterpret_cast<float*>(b + blk * (kBlockBytes / 2) + 32 * p), pairs[p]);
  }
}

using ExpandFn = void (*)(const MatrixView& w, int64_t tile, uint16_t* b);
ExpandFn expander(const MatrixView& w) {
  switch (w.packing) {
    case avx512::kPackQ4_0Rows16: return expand_legacy<true>;
    case avx512::kPackQ8_0Rows16: return expand_legacy<false>;
    case avx512::kPackQ4_KRows16: return expand_q4_k;
    case avx512::kPackQ6_KRows16: return expand_q6_k;
    case avx512::kPackNone:
      if (w.dtype == DType::F16) return expand_float<DType::F16>;
      if (w.dtype == DType::BF16) return expand_float<DType::BF16>;
      if (w.dtype == DType::F32) return expand_float<DType::F32>;
      return nullptr;
    default: return nullptr;
  }
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
  const ExpandFn expand = expander(w);
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
      for (int j = 0; j < nr; ++j) expand(w, rt + j, b_scratch + j * row_tile_words);
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
