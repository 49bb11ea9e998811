// One-token matmul (GEMV) for quantized weights in GGUF layout with AVX-512 VNNI. Decode is bound by memory
// bandwidth, so each weight byte is decoded in registers exactly once: weights become unsigned bytes (stored q),
// the token's int8 activations multiply them with vpdpbusd, and the zero point is removed per lane with
// precomputed activation sums (init = -offset * sum4). The int32 lanes are then summed per block (exact), and the
// block results go to the GEMV tile, reduced by gemv_finish exactly as the GEMM reduces them (quant_matmul.h).
// GCC 12 reports its own AVX-512 cast intrinsics (deliberately undefined upper lanes) as maybe-uninitialized.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#include <immintrin.h>

#include <algorithm>

#include "kernels/cpu/decode_avx512.h"
#include "kernels/cpu/quant_matmul.h"
#include "kernels/cpu/scratch.h"
#include "tensor/blocks.h"

namespace kairo::kernels::avx512 {
namespace {

using cpu::ActQ8;

inline const uint8_t* row_ptr(const MatrixView& w, int64_t r) {
  return static_cast<const uint8_t*>(w.data) + r * static_cast<int64_t>(w.row_bytes);
}

inline __m512i zero_point_init(const ActQ8& a, int64_t lane, int shift) {
  if (shift < 0) return _mm512_setzero_si512();
  const __m512i s = _mm512_loadu_si512(a.sum4 + lane);
  return _mm512_sub_epi32(_mm512_setzero_si512(), _mm512_sll_epi32(s, _mm_cvtsi32_si128(shift)));
}

// The f16 at byte `offset` of each of n (<= 16) consecutive blocks of `bytes` bytes, as floats (missing: 0).
inline __m512 gather_halves(const uint8_t* first_block, int bytes, int offset, int n) {
  const __mmask16 mask = static_cast<__mmask16>(n >= 16 ? 0xFFFF : (1u << n) - 1);
  const __m512i idx = _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                                         _mm512_set1_epi32(bytes));
  const __m512i v = _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), mask, idx, first_block + offset, 1);
  return _mm512_cvtph_ps(_mm512_cvtepi32_epi16(v));
}

// Legacy types, one row: per 16 blocks, 8 vpdpbusd over block pairs, summed per block.
template <class T>
void legacy_row(const MatrixView& w, const ActQ8& a, int64_t r, int slot, GemvTile& t) {
  const int64_t nb = w.n_cols / 32;
  const uint8_t* row = row_ptr(w, r);
  float* c = t.c + slot * t.stride;
  float* d = t.d + slot * t.stride;
  __m512 mslot = _mm512_setzero_ps();
  for (int64_t g = 0; g * 16 < nb; ++g) {
    const int nbg = static_cast<int>(std::min<int64_t>(16, nb - g * 16));
    __m512i v[8];
    for (int k = 0; k < 8; ++k) {
      const int64_t b = g * 16 + 2 * k;
      if (b >= nb) {
        v[k] = _mm512_setzero_si512();
        continue;
      }
      const uint8_t* p0 = row + b * T::kBytes;
      const uint8_t* p1 = b + 1 < nb ? p0 + T::kBytes : nullptr;
      v[k] = _mm512_dpbusd_epi32(zero_point_init(a, b * 8, T::kShift), T::weights(p0, p1),
                                 _mm512_load_si512(a.q + b * 32));
    }
    const __m512i f = block_sums_8lane(hsum_128lanes4(v[0], v[1], v[2], v[3]), hsum_128lanes4(v[4], v[5], v[6], v[7]));
    _mm512_storeu_ps(c + g * 16, _mm512_mul_ps(_mm512_cvtepi32_ps(f), _mm512_loadu_ps(a.d + g * 16)));
    const uint8_t* first = row + g * 16 * T::kBytes;
    _mm512_storeu_ps(d + g * 16, gather_halves(first, T::kBytes, 0, nbg));
    if constexpr (T::kMin)
      mslot = _mm512_fmadd_ps(gather_halves(first, T::kBytes, 2, nbg), _mm512_loadu_ps(a.s + g * 16), mslot);
  }
  if constexpr (T::kMin) _mm512_storeu_ps(t.mslot + slot * 16, mslot);
}

template <class T>
void legacy_tile(const MatrixView& w, const ActQ8& a, int64_t r0, int n, GemvTile& t) {
  for (int i = 0; i < n; ++i) legacy_row<T>(w, a, r0 + i, i, t);
}

// Q4_K / Q5_K super-block at p: its 8 sub-block dots as hsum_128lanes4 lanes, and [d * sc_j (8), dmin * m_j (8)].
template <bool kQ5>
inline void k45_superblock(const uint8_t* p, const __m512i* aq, __m512i* bsum, __m512* sm) {
  *sm = k4_scale_min_floats(p);
  __m512i hq = _mm512_setzero_si512();
  if constexpr (kQ5) hq = broadcast_32_bytes(p + 16);
  __m512i wv[4];
  k4_chunk_pair(p + (kQ5 ? 48 : 16), 0, &wv[0], &wv[1]);
  k4_chunk_pair(p + (kQ5 ? 48 : 16), 2, &wv[2], &wv[3]);
  __m512i dv[4];
  for (int j = 0; j < 4; ++j) {
    if constexpr (kQ5) wv[j] = k5_high_bits(wv[j], hq, j);
    dv[j] = _mm512_dpbusd_epi32(_mm512_setzero_si512(), wv[j], aq[j]);
  }
  *bsum = hsum_128lanes4(dv[0], dv[1], dv[2], dv[3]);
}

// Q4_K / Q5_K: 8 sub-blocks of 32 per super-block, a group of 16 blocks = 2 super-blocks.
template <bool kQ5, int NR>
void k45_rows(const MatrixView& w, const ActQ8& a, int64_t r, int slot, GemvTile& t) {
  constexpr int kBytes = kQ5 ? sizeof(BlockQ5_K) : sizeof(BlockQ4_K);
  const int64_t nsb = w.n_cols / 256;
  const uint8_t* rows[NR];
  __m512 mslot[NR];
  for (int i = 0; i < NR; ++i) {
    rows[i] = row_ptr(w, r + i);
    mslot[i] = _mm512_setzero_ps();
  }
  for (int64_t sb0 = 0; sb0 < nsb; sb0 += 2) {
    const bool two = sb0 + 1 < nsb;
    __m512i aq[8];
    for (int j = 0; j < 8; ++j) aq[j] = two || j < 4 ? _mm512_load_si512(a.q + sb0 * 256 + 64 * j) : aq[0];
    const __m512 da = _mm512_loadu_ps(a.d + sb0 * 8);
    const __m512 sa = _mm512_loadu_ps(a.s + sb0 * 8);
    for (int i = 0; i < NR; ++i) {
      const uint8_t* p = rows[i] + sb0 * kBytes;
      __m512i b0, b1 = _mm512_setzero_si512();
      __m512 s0, s1 = _mm512_setzero_ps();
      k45_superblock<kQ5>(p, aq, &b0, &s0);
      if (two) k45_superblock<kQ5>(p + kBytes, aq + 4, &b1, &s1);
      const __m512i f = block_sums_8lane(b0, b1);
      _mm512_storeu_ps(t.c + (slot + i) * t.stride + sb0 * 8, _mm512_mul_ps(_mm512_cvtepi32_ps(f), da));
      _mm512_storeu_ps(t.d + (slot + i) * t.stride + sb0 * 8, _mm512_shuffle_f32x4(s0, s1, 0x44));
      // The min enters as value = d * sc * q - dmin * m: m_b = -(dmin * m_j), as the GEMM unpacking stores it.
      const __m512 m = _mm512_sub_ps(_mm512_setzero_ps(), _mm512_shuffle_f32x4(s0, s1, 0xEE));
      mslot[i] = _mm512_fmadd_ps(m, sa, mslot[i]);
    }
  }
  for (int i = 0; i < NR; ++i) _mm512_storeu_ps(t.mslot + (slot + i) * 16, mslot[i]);
}

// Q6_K: 16 sub-blocks of 16 per super-block = one group; 4 lanes per sub-block.
template <int NR>
void q6k_rows(const MatrixView& w, const ActQ8& a, int64_t r, int slot, GemvTile& t) {
  constexpr int kBytes = sizeof(BlockQ6_K);
  const int64_t nsb = w.n_cols / 256;
  const uint8_t* rows[NR];
  for (int i = 0; i < NR; ++i) rows[i] = row_ptr(w, r + i);
  const __m512i da_idx = _mm512_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7);
  for (int64_t sb = 0; sb < nsb; ++sb) {
    __m512i aq[4], init[4];
    for (int c = 0; c < 4; ++c) {
      const int64_t col = sb * 256 + 64 * c;
      aq[c] = _mm512_load_si512(a.q + col);
      init[c] = zero_point_init(a, col / 4, 5);
    }
    // sub-block j uses the scale of activation block j / 2
    const __m512 da = _mm512_permutexvar_ps(da_idx, _mm512_castps256_ps512(_mm256_loadu_ps(a.d + sb * 8)));
    for (int i = 0; i < NR; ++i) {
      const uint8_t* p = rows[i] + sb * kBytes;
      __m512i v[4];
      for (int c = 0; c < 4; ++c) v[c] = _mm512_dpbusd_epi32(init[c], q6k_chunk(p, c), aq[c]);
      const __m512i f = block_sums_4lane(v[0], v[1], v[2], v[3]);
      _mm512_storeu_ps(t.c + (slot + i) * t.stride + sb * 16, _mm512_mul_ps(_mm512_cvtepi32_ps(f), da));
      _mm512_storeu_ps(t.d + (slot + i) * t.stride + sb * 16, q6k_scales(p));
    }
  }
}

template <void (*Rows4)(const MatrixView&, const ActQ8&, int64_t, int, GemvTile&),
          void (*Rows1)(const MatrixView&, const ActQ8&, int64_t, int, GemvTile&)>
void rows_tile(const MatrixView& w, const ActQ8& a, int64_t r0, int n, GemvTile& t) {
  int i = 0;
  for (; i + 4 <= n; i += 4) Rows4(w, a, r0 + i, i, t);
  for (; i < n; ++i) Rows1(w, a, r0 + i, i, t);
}

}  // namespace

int block_k_of(DType type) { return type == DType::Q6_K ? 16 : 32; }

bool has_min(DType type) {
  return type == DType::Q4_1 || type == DType::Q5_1 || type == DType::Q4_K || type == DType::Q5_K;
}

size_t gemv_tile_bytes(int64_t n_blocks) {
  const size_t stride = cpu::align_up(static_cast<size_t>(n_blocks), 16);
  return (2 * kGemvRows * stride + kGemvRows * 16) * sizeof(float);
}

GemvTile gemv_tile_layout(void* mem, int64_t n_blocks) {
  GemvTile t;
  t.stride = static_cast<int64_t>(cpu::align_up(static_cast<size_t>(n_blocks), 16));
  t.c = static_cast<float*>(mem);
  t.d = t.c + kGemvRows * t.stride;
  t.mslot = t.d + kGemvRows * t.stride;
  return t;
}

GemvFn gemv_kernel(DType type) {
  switch (type) {
    case DType::Q4_0: return legacy_tile<LegacyQ4_0>;
    case DType::Q4_1: return legacy_tile<LegacyQ4_1>;
    case DType::Q5_0: return legacy_tile<LegacyQ5_0>;
    case DType::Q5_1: return legacy_tile<LegacyQ5_1>;
    case DType::Q8_0: return legacy_tile<LegacyQ8_0>;
    case DType::Q4_K: return rows_tile<k45_rows<false, 4>, k45_rows<false, 1>>;
    case DType::Q5_K: return rows_tile<k45_rows<true, 4>, k45_rows<true, 1>>;
    case DType::Q6_K: return rows_tile<q6k_rows<4>, q6k_rows<1>>;
    default: return nullptr;
  }
}

}  // namespace kairo::kernels::avx512
