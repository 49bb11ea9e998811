// Unpacking quantized weight rows into int8 tiles for the GEMM kernels. Runs once per 16 rows per matmul and is
// amortized over every token tile, so it only has to be cheap relative to 16 tokens of multiply-adds.
// GCC 12 reports its own AVX-512 cast intrinsics (deliberately undefined upper lanes) as maybe-uninitialized.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#include <immintrin.h>

#include <cstring>

#include "kernels/cpu/decode_avx512.h"
#include "kernels/cpu/quant_matmul.h"
#include "kernels/cpu/scratch.h"
#include "tensor/blocks.h"

namespace kairo::kernels::avx512 {
namespace {

// Stores 64 consecutive values of row i starting at column col (a multiple of 64) into the block-major layout.
inline void store64(WeightTile& t, int i, int64_t col, __m512i v) {
  if (t.block_k == 32) {
    const int64_t b = col / 32;
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(t.q + (b * kTileRows + i) * 32), _mm512_castsi512_si256(v));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(t.q + ((b + 1) * kTileRows + i) * 32),
                        _mm512_extracti64x4_epi64(v, 1));
  } else {
    const int64_t b = col / 16;
    _mm_storeu_si128(reinterpret_cast<__m128i*>(t.q + (b * kTileRows + i) * 16), _mm512_castsi512_si128(v));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(t.q + ((b + 1) * kTileRows + i) * 16), _mm512_extracti32x4_epi32(v, 1));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(t.q + ((b + 2) * kTileRows + i) * 16), _mm512_extracti32x4_epi32(v, 2));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(t.q + ((b + 3) * kTileRows + i) * 16), _mm512_extracti32x4_epi32(v, 3));
  }
}

template <class T>
void unpack_legacy_row(const uint8_t* row, int64_t n_cols, int i, WeightTile& t) {
  const int64_t nb = n_cols / 32;
  const __m512i offset = _mm512_set1_epi8(static_cast<char>(T::kShift >= 0 ? 1 << T::kShift : 0));
  for (int64_t b = 0; b < nb; b += 2) {
    const uint8_t* p0 = row + b * T::kBytes;
    const uint8_t* p1 = b + 1 < nb ? p0 + T::kBytes : nullptr;
    const __m512i v = _mm512_sub_epi8(T::weights(p0, p1), offset);
    if (p1 != nullptr) {
      store64(t, i, b * 32, v);
    } else {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(t.q + (b * kTileRows + i) * 32), _mm512_castsi512_si256(v));
    }
    float* d = t.d + i * t.scale_stride;
    d[b] = half_at(p0);
    if (p1 != nullptr) d[b + 1] = half_at(p1);
    if constexpr (T::kMin) {
      float* m = t.m + i * t.scale_stride;
      m[b] = half_at(p0 + 2);
      if (p1 != nullptr) m[b + 1] = half_at(p1 + 2);
    }
  }
}

template <bool kQ5>
void unpack_k45_row(const uint8_t* row, int64_t n_cols, int i, WeightTile& t) {
  constexpr int kBytes = kQ5 ? sizeof(BlockQ5_K) : sizeof(BlockQ4_K);
  for (int64_t sb = 0; sb < n_cols / 256; ++sb) {
    const uint8_t* p = row + sb * kBytes;
    const __m512 sm = k4_scale_min_floats(p);  // [d * sc_j (8), dmin * m_j (8)]
    _mm256_storeu_ps(t.d + i * t.scale_stride + sb * 8, _mm512_castps512_ps256(sm));
    _mm256_storeu_ps(t.m + i * t.scale_stride + sb * 8,
                     _mm512_extractf32x8_ps(_mm512_sub_ps(_mm512_setzero_ps(), sm), 1));
    __m512i hq = _mm512_setzero_si512();
    if constexpr (kQ5) hq = broadcast_32_bytes(p + 16);
    for (int k = 0; k < 4; ++k) {
      __m512i v = k4_chunk(p + (kQ5 ? 48 : 16), k);
      if constexpr (kQ5) v = k5_high_bits(v, hq, k);
      store64(t, i, sb * 256 + 64 * k, v);
    }
  }
}

void unpack_q6k_row(const uint8_t* row, int64_t n_cols, int i, WeightTile& t) {
  for (int64_t sb = 0; sb < n_cols / 256; ++sb) {
    const uint8_t* p = row + sb * sizeof(BlockQ6_K);
    _mm512_storeu_ps(t.d + i * t.scale_stride + sb * 16, q6k_scales(p));
    for (int c = 0; c < 4; ++c)
      store64(t, i, sb * 256 + 64 * c, _mm512_sub_epi8(q6k_chunk(p, c), _mm512_set1_epi8(32)));
  }
}

// A row tile (Packing in quant_matmul.h): v[k] lane r holds values 4k..4k+3 of row r, so the dword transpose that
// turns 8 x 16 dwords into 16 runs of 8 gives each row its 32 consecutive values; the 16 scales of 16 blocks are
// transposed from [block][row] to [row][block].
template <bool kQ4>
void unpack_row_tile(const MatrixView& w, int64_t tile, WeightTile& t) {
  constexpr int kValueBytes = kQ4 ? 256 : 512;
  const int64_t nb = w.n_cols / 32;
  const uint8_t* values = row_tile_base(w, tile);
  const uint8_t* scales = values + nb * kValueBytes;
  for (int64_t b = 0; b < nb; ++b) {
    __m512i v[8], o[8];
    row_tile_signed<kQ4>(values + b * kValueBytes, v);
    transpose_8x16_dwords(v, o);
    for (int r = 0; r < kTileRows; ++r) {  // row r is half r / 4 % 2 of o[r % 4 + 4 * (r / 8)]
      const __m512i x = o[r % 4 + 4 * (r / 8)];
      const __m256i half = (r / 4) % 2 == 0 ? _mm512_castsi512_si256(x) : _mm512_extracti64x4_epi64(x, 1);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(t.q + (b * kTileRows + r) * 32), half);
    }
  }
  for (int64_t b0 = 0; b0 < nb; b0 += 16) {
    __m512 by_block[16], by_row[16];
    for (int j = 0; j < 16; ++j)
      by_block[j] = b0 + j < nb ? _mm512_cvtph_ps(_mm256_loadu_si256(
                                      reinterpret_cast<const __m256i*>(scales + 32 * (b0 + j))))
                                : _mm512_setzero_ps();
    transpose_16x16(by_block, by_row);
    // Whole vectors: past the last block they land in the row's padding (scale_stride is a multiple of 16).
    for (int r = 0; r < kTileRows; ++r) _mm512_storeu_ps(t.d + r * t.scale_stride + b0, by_row[r]);
  }
}

// Per-row floats of block b from a vector over the 16 rows: t.d / t.m are [row][block].
inline void scatter_rows(float* dst, int64_t stride, int64_t b, __m512 v) {
  const __m512i idx = _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                                         _mm512_set1_epi32(static_cast<int>(stride)));
  _mm512_i32scatter_ps(dst + b, idx, v, 4);
}

// A Q4_K row tile: values as in the Q4_0 tile (no zero point), d * sc and -(dmin * m) per row and block.
void unpack_q4_k_row_tile(const MatrixView& w, int64_t tile, WeightTile& t) {
  const uint8_t* base = row_tile_base(w, tile);
  for (int64_t sb = 0; sb < w.n_cols / 256; ++sb) {
    const uint8_t* p = base + sb * kPackQ4_KSuperBytes;
    const __m512 d = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 2048)));
    const __m512 dmin = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 2080)));
    for (int j = 0; j < 8; ++j) {
      const int64_t b = sb * 8 + j;
      __m512i v[8], o[8];
      row_tile_nibbles(p + 256 * j, v);
      transpose_8x16_dwords(v, o);
      for (int r = 0; r < kTileRows; ++r) {
        const __m512i x = o[r % 4 + 4 * (r / 8)];
        const __m256i half = (r / 4) % 2 == 0 ? _mm512_castsi512_si256(x) : _mm512_extracti64x4_epi64(x, 1);
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(t.q + (b * kTileRows + r) * 32), half);
      }
      const __m512 sc = _mm512_cvtepi32_ps(
          _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 2112 + 16 * j))));
      const __m512 mn = _mm512_cvtepi32_ps(
          _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 2240 + 16 * j))));
      scatter_rows(t.d, t.scale_stride, b, _mm512_mul_ps(sc, d));
      scatter_rows(t.m, t.scale_stride, b, _mm512_sub_ps(_mm512_setzero_ps(), _mm512_mul_ps(mn, dmin)));
    }
  }
}

// A Q6_K row tile: 16-value sub-blocks (block_k 16) as q - 32, d * sc per row and block.
void unpack_q6_k_row_tile(const MatrixView& w, int64_t tile, WeightTile& t) {
  const uint8_t* base = row_tile_base(w, tile);
  const __m512i zp = _mm512_set1_epi8(32);
  // o_m lane 4 * rr + k = v_k lane 4m + rr: rows 4m .. 4m+3, 4 dwords (16 values) each
  // (one index pattern serves both pairs: k % 2 picks the vector of the pair; the blend takes k >= 2 from q2/q3)
  __m512i idx[4];
  for (int m = 0; m < 4; ++m) {
    alignas(64) int32_t i[16];
    for (int rr = 0; rr < 4; ++rr)
      for (int k = 0; k < 4; ++k) i[4 * rr + k] = (k % 2) * 16 + 4 * m + rr;
    idx[m] = _mm512_load_si512(i);
  }
  for (int64_t sb = 0; sb < w.n_cols / 256; ++sb) {
    const uint8_t* p = base + sb * kPackQ6_KSuperBytes;
    const __m512 d = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 3072)));
    for (int j = 0; j < 16; ++j) {
      const int64_t b = sb * 16 + j;
      __m512i q[4];
      q6_k_row_tile_values(p + 192 * j, q);
      for (auto& x : q) x = _mm512_sub_epi8(x, zp);
      for (int m = 0; m < 4; ++m) {
        const __m512i t01 = _mm512_permutex2var_epi32(q[0], idx[m], q[1]);
        const __m512i t23 = _mm512_permutex2var_epi32(q[2], idx[m], q[3]);
        _mm512_storeu_si512(t.q + (b * kTileRows + 4 * m) * 16, _mm512_mask_blend_epi32(0xCCCC, t01, t23));
      }
      const __m512 sc = _mm512_cvtepi32_ps(
          _mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 3104 + 16 * j))));
      scatter_rows(t.d, t.scale_stride, b, _mm512_mul_ps(sc, d));
    }
  }
}

// corr[b][i] = -128 * sum of block b of row i: vpdpbusd adds 128 to every activation (it wants unsigned bytes).
void fill_corrections(int i, WeightTile& t) {
  const __m128i flip = _mm_set1_epi8(static_cast<char>(0x80));
  for (int64_t b = 0; b < t.n_blocks; ++b) {
    int64_t sum = 0;
    for (int h = 0; h < t.block_k; h += 16) {
      const int8_t* src = t.q + (b * kTileRows + i) * t.block_k + h;
      const __m128i v = _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src)), flip);
      const __m128i s = _mm_sad_epu8(v, _mm_setzero_si128());
      sum += _mm_cvtsi128_si64(s) + _mm_extract_epi64(s, 1) - 16 * 128;
    }
    t.corr[i * t.scale_stride + b] = static_cast<int32_t>(-128 * sum);
  }
}

}  // namespace

bool has_gemm(DType type) {
  switch (type) {
    case DType::Q4_0: case DType::Q4_1: case DType::Q5_0: case DType::Q5_1: case DType::Q8_0:
    case DType::Q4_K: case DType::Q5_K: case DType::Q6_K: return true;
    default: return false;
  }
}

size_t weight_tile_bytes(DType type, int64_t n_cols) {
  const int64_t n_blocks = n_cols / block_k_of(type);
  const size_t q = kTileRows * cpu::align_up(static_cast<size_t>(n_cols), 64);  // n_cols is a multiple of 32
  const size_t per_row = cpu::align_up(static_cast<size_t>(n_blocks), 16);
  return q + 3 * kTileRows * per_row * 4;
}

void weight_tile_layout(DType type, int64_t n_cols, void* mem, WeightTile& t) {
  t.block_k = block_k_of(type);
  t.n_blocks = n_cols / t.block_k;
  t.scale_stride = static_cast<int64_t>(cpu::align_up(static_cast<size_t>(t.n_blocks), 16));
  const size_t per_block = static_cast<size_t>(kTileRows * t.scale_stride) * 4;
  auto* p = static_cast<uint8_t*>(mem);
  t.q = reinterpret_cast<int8_t*>(p);
  p += kTileRows * cpu::align_up(static_cast<size_t>(n_cols), 64);
  t.d = reinterpret_cast<float*>(p);
  t.m = has_min(type) ? reinterpret_cast<float*>(p + per_block) : nullptr;
  t.corr = reinterpret_cast<int32_t*>(p + 2 * per_block);
}

void unpack_weight_tile(const MatrixView& w, int64_t r0, bool with_corr, WeightTile& t) {
  if (is_row_tile_packing(w.packing)) {  // r0 is a multiple of 16: GEMM row tiles are the packed tiles
    const int64_t tile = r0 / kPackTileRows;
    switch (w.packing) {
      case kPackQ4_0Rows16: unpack_row_tile<true>(w, tile, t); break;
      case kPackQ8_0Rows16: unpack_row_tile<false>(w, tile, t); break;
      case kPackQ4_KRows16: unpack_q4_k_row_tile(w, tile, t); break;
      default: unpack_q6_k_row_tile(w, tile, t); break;
    }
    if (with_corr)
      for (int i = 0; i < kTileRows; ++i) fill_corrections(i, t);
    return;
  }
  const auto* base = static_cast<const uint8_t*>(w.data);
  for (int i = 0; i < kTileRows; ++i) {
    const int64_t r = r0 + i;
    if (r >= w.n_rows) {
      for (int64_t b = 0; b < t.n_blocks; ++b) {
        std::memset(t.q + (b * kTileRows + i) * t.block_k, 0, static_cast<size_t>(t.block_k));
        t.d[i * t.scale_stride + b] = 0.0f;
        if (t.m) t.m[i * t.scale_stride + b] = 0.0f;
        t.corr[i * t.scale_stride + b] = 0;
      }
      continue;
    }
    const uint8_t* row = base + r * static_cast<int64_t>(w.row_bytes);
    switch (w.dtype) {
      case DType::Q4_0: unpack_legacy_row<LegacyQ4_0>(row, w.n_cols, i, t); break;
      case DType::Q4_1: unpack_legacy_row<LegacyQ4_1>(row, w.n_cols, i, t); break;
      case DType::Q5_0: unpack_legacy_row<LegacyQ5_0>(row, w.n_cols, i, t); break;
      case DType::Q5_1: unpack_legacy_row<LegacyQ5_1>(row, w.n_cols, i, t); break;
      case DType::Q8_0: unpack_legacy_row<LegacyQ8_0>(row, w.n_cols, i, t); break;
      case DType::Q4_K: unpack_k45_row<false>(row, w.n_cols, i, t); break;
      case DType::Q5_K: unpack_k45_row<true>(row, w.n_cols, i, t); break;
      case DType::Q6_K: unpack_q6k_row(row, w.n_cols, i, t); break;
      default: break;
    }
    if (with_corr) fill_corrections(i, t);
  }
}

}  // namespace kairo::kernels::avx512
