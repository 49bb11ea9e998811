// The row-tile kernels (layouts in quant_matmul.h) for AVX2 CPUs: the one-token GEMV over a few tiles at once and
// the multi-token kernel over one tile, for Q4_0, Q8_0, MXFP4, Q4_K and Q6_K. A 64-byte step of a tile holds 4
// values of each of 16 rows: its two 32-byte halves are rows 0-7 and 8-15, each a ymm of 8 rows in 32-bit lanes.
// AVX2 has no vpdpbusd: vpmaddubsw multiplies unsigned weight bytes by signed activation bytes into 16-bit pair sums,
// which are added while they cannot overflow (|a| <= 127; 4-bit values: 8 groups, MXFP4's values <= 24: 4, Q6_K's
// <= 63: 2), then vpmaddwd by ones widens them to the 32-bit dot of each row. Q8_0's bytes reach 255, so they use
// the sign trick instead (|w| times a with w's sign). Integer dots are exact, and the float steps per row are
// those of the AVX-512 kernels (the batch-invariance contract, quant_matmul.h), so every output is bit-identical
// to the AVX-512 path's, and one token's outputs never depend on the other tokens of the call.
#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "kernels/cpu/quant_matmul.h"
#include "kernels/cpu/row_tile_matmul.h"

namespace kairo::kernels::avx2 {
namespace {

using avx512::kPackQ4_KSuperBytes;
using avx512::kPackQ6_KSuperBytes;
using avx512::kPackTileRows;
using avx512::row_tile_base;
using cpu::ActQ8;

// The 4 bytes at p in every 32-bit lane.
inline __m256i broadcast4(const void* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return _mm256_set1_epi32(v);
}
inline __m256i load256(const uint8_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
// 8 f16 values at p (one per row of a half tile) as floats.
inline __m256 half8_ps(const uint8_t* p) { return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))); }
// 8 bytes at p (one per row), unsigned or signed, as floats.
template <bool kSigned>
inline __m256 bytes8_ps(const uint8_t* p) {
  const __m128i x = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
  return _mm256_cvtepi32_ps(kSigned ? _mm256_cvtepi8_epi32(x) : _mm256_cvtepu8_epi32(x));
}
// MXFP4: 8 E8M0 scale bytes as the floats 2^(e - 128) (e = 0 and 1: the subnormals 2^-128 and 2^-127), exactly
// mxfp4_scale's.
inline __m256 e8m0_8_ps(const uint8_t* p) {
  const __m256i e = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
  const __m256i normal = _mm256_slli_epi32(_mm256_sub_epi32(e, _mm256_set1_epi32(1)), 23);
  const __m256i subnormal = _mm256_sllv_epi32(_mm256_set1_epi32(0x00200000), e);
  const __m256i is_normal = _mm256_cmpgt_epi32(e, _mm256_set1_epi32(1));
  return _mm256_castsi256_ps(_mm256_blendv_epi8(subnormal, normal, is_normal));
}

// Half h of the per-row sum of 16 min slots (slot[j][h]: 8 rows), with the tree of the AVX-512 kernels
// (decode_avx512.h tree_sum16).
inline __m256 tree_sum16(const float (*slot)[2][8], int h) {
  __m256 s[4];
  for (int l = 0; l < 4; ++l) {
    const __m256 a = _mm256_add_ps(_mm256_load_ps(slot[4 * l][h]), _mm256_load_ps(slot[4 * l + 2][h]));
    const __m256 b = _mm256_add_ps(_mm256_load_ps(slot[4 * l + 1][h]), _mm256_load_ps(slot[4 * l + 3][h]));
    s[l] = _mm256_add_ps(a, b);
  }
  return _mm256_add_ps(_mm256_add_ps(s[0], s[1]), _mm256_add_ps(s[2], s[3]));
}

// The weight types. A unit is what one integer dot covers: a 32-value block (Q6_K: a 16-value sub-block) of the 16
// rows, kGroups groups of 4 values. load() decodes unit u of a tile into w[group][half] (unsigned; Q8_0: signed),
// scale() gives the per-row float the dot's c is multiplied by, and the activations' zero-point correction, scale
// index and columns follow the AVX-512 kernels.
struct Q4_0Type {
  static constexpr int kGroups = 8, kRun = 8;
  static constexpr bool kSignTrick = false, kMins = false;
  static int64_t units(const MatrixView& w) { return w.n_cols / 32; }
  static int64_t unit_offset(int64_t u) { return 256 * u; }
  static constexpr int kUnitBytes = 256;
  static void load(const uint8_t* tile, int64_t u, __m256i (*w)[2]) {
    const __m256i m4 = _mm256_set1_epi8(0x0F);
    for (int s = 0; s < 4; ++s)
      for (int h = 0; h < 2; ++h) {
        const __m256i z = load256(tile + 256 * u + 64 * s + 32 * h);
        w[2 * s][h] = _mm256_and_si256(z, m4);
        w[2 * s + 1][h] = _mm256_and_si256(_mm256_srli_epi16(z, 4), m4);
      }
  }
  static __m256 scale(const MatrixView& w, const uint8_t* tile, int64_t u, int h) {
    return half8_ps(tile + (w.n_cols / 32) * 256 + 32 * u + 16 * h);
  }
  static int32_t zero_point(const ActQ8& a, int64_t u) { return a.zero_point_q4[u]; }
  static int64_t act_col(int64_t u) { return 32 * u; }
  static int64_t act_block(int64_t u) { return u; }
};

struct Q8_0Type {
  static constexpr int kGroups = 8, kRun = 1;
  static constexpr bool kSignTrick = true, kMins = false;
  static int64_t units(const MatrixView& w) { return w.n_cols / 32; }
  static int64_t unit_offset(int64_t u) { return 512 * u; }
  static constexpr int kUnitBytes = 512;
  static void load(const uint8_t* tile, int64_t u, __m256i (*w)[2]) {  // stored + 128: back to signed
    const __m256i flip = _mm256_set1_epi8(static_cast<char>(0x80));
    for (int k = 0; k < 8; ++k)
      for (int h = 0; h < 2; ++h) w[k][h] = _mm256_xor_si256(load256(tile + 512 * u + 64 * k + 32 * h), flip);
  }
  static __m256 scale(const MatrixView& w, const uint8_t* tile, int64_t u, int h) {
    return half8_ps(tile + (w.n_cols / 32) * 512 + 32 * u + 16 * h);
  }
  static int32_t zero_point(const ActQ8&, int64_t) { return 0; }  // the signed values need none
  static int64_t act_col(int64_t u) { return 32 * u; }
  static int64_t act_block(int64_t u) { return u; }
};

struct MXFP4Type {
  static constexpr int kGroups = 8, kRun = 4;
  static constexpr bool kSignTrick = false, kMins = false;
  static int64_t units(const MatrixView& w) { return w.n_cols / 32; }
  static int64_t unit_offset(int64_t u) { return 256 * u; }
  static constexpr int kUnitBytes = 256;
  static void load(const uint8_t* tile, int64_t u, __m256i (*w)[2]) {  // codes -> doubled E2M1 value + 12
    const __m256i m4 = _mm256_set1_epi8(0x0F);
    const __m256i table = _mm256_setr_epi8(12, 13, 14, 15, 16, 18, 20, 24, 12, 11, 10, 9, 8, 6, 4, 0, 12, 13, 14, 15,
                                           16, 18, 20, 24, 12, 11, 10, 9, 8, 6, 4, 0);
    for (int s = 0; s < 4; ++s)
      for (int h = 0; h < 2; ++h) {
        const __m256i z = load256(tile + 256 * u + 64 * s + 32 * h);
        w[2 * s][h] = _mm256_shuffle_epi8(table, _mm256_and_si256(z, m4));
        w[2 * s + 1][h] = _mm256_shuffle_epi8(table, _mm256_and_si256(_mm256_srli_epi16(z, 4), m4));
      }
  }
  static __m256 scale(const MatrixView& w, const uint8_t* tile, int64_t u, int h) {
    return e8m0_8_ps(tile + (w.n_cols / 32) * 256 + 16 * u + 8 * h);
  }
  static int32_t zero_point(const ActQ8& a, int64_t u) { return a.zero_point_mxfp4[u]; }
  static int64_t act_col(int64_t u) { return 32 * u; }
  static int64_t act_block(int64_t u) { return u; }
};

// Q4_K: units are the 8 sub-blocks of each super-block (values in the Q4_0 layout, no zero point); scale d * sc_j,
// min dmin * m_j into slot u % 16.
struct Q4_KType {
  static constexpr int kGroups = 8, kRun = 8;
  static constexpr bool kSignTrick = false, kMins = true;
  static int64_t units(const MatrixView& w) { return w.n_cols / 32; }
  static int64_t unit_offset(int64_t u) { return u / 8 * kPackQ4_KSuperBytes + 256 * (u % 8); }
  static constexpr int kUnitBytes = 256;
  static void load(const uint8_t* tile, int64_t u, __m256i (*w)[2]) {
    const __m256i m4 = _mm256_set1_epi8(0x0F);
    const uint8_t* v = tile + unit_offset(u);
    for (int s = 0; s < 4; ++s)
      for (int h = 0; h < 2; ++h) {
        const __m256i z = load256(v + 64 * s + 32 * h);
        w[2 * s][h] = _mm256_and_si256(z, m4);
        w[2 * s + 1][h] = _mm256_and_si256(_mm256_srli_epi16(z, 4), m4);
      }
  }
  static __m256 scale(const MatrixView&, const uint8_t* tile, int64_t u, int h) {
    const uint8_t* p = tile + u / 8 * kPackQ4_KSuperBytes;
    return _mm256_mul_ps(bytes8_ps<false>(p + 2112 + 16 * (u % 8) + 8 * h), half8_ps(p + 2048 + 16 * h));
  }
  static __m256 min(const uint8_t* tile, int64_t u, int h) {
    const uint8_t* p = tile + u / 8 * kPackQ4_KSuperBytes;
    return _mm256_mul_ps(bytes8_ps<false>(p + 2240 + 16 * (u % 8) + 8 * h), half8_ps(p + 2080 + 16 * h));
  }
  static int32_t zero_point(const ActQ8&, int64_t) { return 0; }
  static int64_t act_col(int64_t u) { return 32 * u; }
  static int64_t act_block(int64_t u) { return u; }
};

// Q6_K: units are 16-value sub-blocks (stored + 32), scale d * sc_j, the activations' scale of the 32-value block
// the sub-block lies in.
struct Q6_KType {
  static constexpr int kGroups = 4, kRun = 2;
  static constexpr bool kSignTrick = false, kMins = false;
  static int64_t units(const MatrixView& w) { return w.n_cols / 16; }
  static int64_t unit_offset(int64_t u) { return u / 16 * kPackQ6_KSuperBytes + 192 * (u % 16); }
  static constexpr int kUnitBytes = 192;
  static void load(const uint8_t* tile, int64_t u, __m256i (*w)[2]) {
    const __m256i m4 = _mm256_set1_epi8(0x0F), m30 = _mm256_set1_epi8(0x30);
    const uint8_t* v = tile + unit_offset(u);
    for (int h = 0; h < 2; ++h) {
      const __m256i n0 = load256(v + 32 * h), n1 = load256(v + 64 + 32 * h), hb = load256(v + 128 + 32 * h);
      w[0][h] = _mm256_or_si256(_mm256_and_si256(n0, m4), _mm256_and_si256(_mm256_slli_epi16(hb, 4), m30));
      w[1][h] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(n0, 4), m4),
                                _mm256_and_si256(_mm256_slli_epi16(hb, 2), m30));
      w[2][h] = _mm256_or_si256(_mm256_and_si256(n1, m4), _mm256_and_si256(hb, m30));
      w[3][h] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(n1, 4), m4),
                                _mm256_and_si256(_mm256_srli_epi16(hb, 2), m30));
    }
  }
  static __m256 scale(const MatrixView&, const uint8_t* tile, int64_t u, int h) {
    const uint8_t* p = tile + u / 16 * kPackQ6_KSuperBytes;
    return _mm256_mul_ps(bytes8_ps<true>(p + 3104 + 16 * (u % 16) + 8 * h), half8_ps(p + 3072 + 16 * h));
  }
  static int32_t zero_point(const ActQ8& a, int64_t u) {
    const int32_t* s4 = a.sum4 + 4 * u;
    return -32 * (s4[0] + s4[1] + s4[2] + s4[3]);
  }
  static int64_t act_col(int64_t u) { return 16 * u; }
  static int64_t act_block(int64_t u) { return u / 2; }
};

// dot[h] += the unit's integer dot for half h, against the activations from aq on.
template <class T>
[[gnu::always_inline]] inline void unit_dot(const __m256i (*w)[2], const int8_t* aq, __m256i* dot) {
  const __m256i ones = _mm256_set1_epi16(1);
  if constexpr (T::kSignTrick) {
#pragma GCC unroll 8
    for (int k = 0; k < T::kGroups; ++k) {
      const __m256i act = broadcast4(aq + 4 * k);
      for (int h = 0; h < 2; ++h) {
        const __m256i p = _mm256_maddubs_epi16(_mm256_abs_epi8(w[k][h]), _mm256_sign_epi8(act, w[k][h]));
        dot[h] = _mm256_add_epi32(dot[h], _mm256_madd_epi16(p, ones));
      }
    }
  } else {
#pragma GCC unroll 8
    for (int k0 = 0; k0 < T::kGroups; k0 += T::kRun) {
      __m256i s[2];
#pragma GCC unroll 8
      for (int k = k0; k < k0 + T::kRun; ++k) {
        const __m256i act = broadcast4(aq + 4 * k);
        for (int h = 0; h < 2; ++h) {
          const __m256i p = _mm256_maddubs_epi16(w[k][h], act);
          s[h] = k == k0 ? p : _mm256_add_epi16(s[h], p);
        }
      }
      for (int h = 0; h < 2; ++h) dot[h] = _mm256_add_epi32(dot[h], _mm256_madd_epi16(s[h], ones));
    }
  }
}

// How far ahead of the unit being multiplied each tile stream is prefetched (the AVX-512 kernels' distance).
constexpr int64_t kPrefetchBytes = 2048;

// kTiles row tiles times kTok tokens (one of them 1): token t's outputs of tile i to y + t * y_stride + 16 * i.
// Per unit each tile's values are decoded once, then every token's dot and float steps follow.
template <class T, int kTiles, int kTok>
void row_tile_kernel(const MatrixView& w, const ActQ8* a, int64_t tile, float* y, int64_t y_stride) {
  static_assert(kTiles == 1 || kTok == 1);
  const int64_t n_units = T::units(w);
  const int64_t tile_bytes = kPackTileRows * static_cast<int64_t>(w.row_bytes);
  const uint8_t* base = row_tile_base(w, tile);
  __m256 acc[kTiles * kTok][2];
  for (auto& v : acc) v[0] = v[1] = _mm256_setzero_ps();
  alignas(32) float slot[T::kMins ? kTiles * kTok : 1][16][2][8];
  if constexpr (T::kMins) std::memset(slot, 0, sizeof(slot));
  for (int64_t u = 0; u < n_units; ++u) {
    for (int i = 0; i < kTiles; ++i) {
      const uint8_t* tb = base + i * tile_bytes;
      for (int l = 0; l < T::kUnitBytes; l += 64)
        _mm_prefetch(reinterpret_cast<const char*>(tb + T::unit_offset(u) + l + kPrefetchBytes), _MM_HINT_T0);
      __m256i wv[T::kGroups][2];
      T::load(tb, u, wv);
      const __m256 sc[2] = {T::scale(w, tb, u, 0), T::scale(w, tb, u, 1)};
      __m256 mn[2];
      if constexpr (T::kMins) mn[0] = T::min(tb, u, 0), mn[1] = T::min(tb, u, 1);
#pragma GCC unroll 4
      for (int t = 0; t < kTok; ++t) {
        const ActQ8& at = a[t];
        __m256i dot[2];
        dot[0] = dot[1] = _mm256_set1_epi32(T::zero_point(at, u));
        unit_dot<T>(wv, at.q + T::act_col(u), dot);
        const __m256 ad = _mm256_set1_ps(at.d[T::act_block(u)]);
        __m256* ac = acc[i * kTok + t];
        for (int h = 0; h < 2; ++h) ac[h] = _mm256_fmadd_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(dot[h]), ad), sc[h], ac[h]);
        if constexpr (T::kMins) {
          const __m256 as = _mm256_set1_ps(at.s[u]);
          float(*sl)[8] = slot[i * kTok + t][u % 16];
          for (int h = 0; h < 2; ++h) _mm256_store_ps(sl[h], _mm256_fnmadd_ps(mn[h], as, _mm256_load_ps(sl[h])));
        }
      }
    }
  }
  for (int i = 0; i < kTiles; ++i)
    for (int t = 0; t < kTok; ++t) {
      float* out = y + t * y_stride + 16 * i;
      for (int h = 0; h < 2; ++h) {
        __m256 r = acc[i * kTok + t][h];
        if constexpr (T::kMins) r = _mm256_add_ps(r, tree_sum16(slot[i * kTok + t], h));
        _mm256_storeu_ps(out + 8 * h, r);
      }
    }
}

// The GEMV: n_tiles tiles, kMaxTiles (a power of two) at a time while they last, so several tile streams are in
// flight.
template <class T, int kMaxTiles>
void row_tiles_gemv(const MatrixView& w, const ActQ8& a, int64_t tile, int n_tiles, float* y) {
  for (; n_tiles >= kMaxTiles; n_tiles -= kMaxTiles, tile += kMaxTiles, y += 16 * kMaxTiles)
    row_tile_kernel<T, kMaxTiles, 1>(w, &a, tile, y, 0);
  if constexpr (kMaxTiles > 1)
    if (n_tiles > 0) row_tiles_gemv<T, kMaxTiles / 2>(w, a, tile, n_tiles, y);
}

// Tokens in passes of 4 (the most whose float accumulators leave room for the dots in 16 vector registers), then
// one pass of the rest.
template <class T>
void row_tile_tokens(const MatrixView& w, const ActQ8* a, int n_tokens, int64_t tile, float* y, int64_t y_stride) {
  for (; n_tokens >= 4; n_tokens -= 4, a += 4, y += 4 * y_stride) row_tile_kernel<T, 1, 4>(w, a, tile, y, y_stride);
  switch (n_tokens) {
    case 3: return row_tile_kernel<T, 1, 3>(w, a, tile, y, y_stride);
    case 2: return row_tile_kernel<T, 1, 2>(w, a, tile, y, y_stride);
    case 1: return row_tile_kernel<T, 1, 1>(w, a, tile, y, y_stride);
    default: return;
  }
}

avx512::RowTileGemvFn gemv_kernel(uint32_t packing) {
  switch (packing) {
    case avx512::kPackQ4_0Rows16: return row_tiles_gemv<Q4_0Type, 4>;
    case avx512::kPackQ8_0Rows16: return row_tiles_gemv<Q8_0Type, 4>;
    case avx512::kPackMXFP4Rows16: return row_tiles_gemv<MXFP4Type, 4>;
    case avx512::kPackQ4_KRows16: return row_tiles_gemv<Q4_KType, 2>;
    case avx512::kPackQ6_KRows16: return row_tiles_gemv<Q6_KType, 2>;
    default: return nullptr;
  }
}

avx512::RowTileTokensFn tokens_kernel(uint32_t packing) {
  switch (packing) {
    case avx512::kPackQ4_0Rows16: return row_tile_tokens<Q4_0Type>;
    case avx512::kPackQ8_0Rows16: return row_tile_tokens<Q8_0Type>;
    case avx512::kPackMXFP4Rows16: return row_tile_tokens<MXFP4Type>;
    case avx512::kPackQ4_KRows16: return row_tile_tokens<Q4_KType>;
    case avx512::kPackQ6_KRows16: return row_tile_tokens<Q6_KType>;
    default: return nullptr;
  }
}

}  // namespace

const cpu::RowTileKernels& row_tile_kernels() {
  static const cpu::RowTileKernels kernels{quantize_act_q8, gemv_kernel, tokens_kernel};
  return kernels;
}

}  // namespace kairo::kernels::avx2
