// The many-token matmul of row tiles (Q4_0, Q8_0, Q4_K, Q6_K) on AVX-512 CPUs without a tile unit: a register-blocked
// VNNI GEMM, 2 row tiles x 6 tokens at a time. Per 4-value group, 2 weight vectors and 6 activation broadcasts feed
// 12 vpdpbusd, where the one-tile kernel (row_tile_tokens_avx512.cpp) spends one broadcast per vpdpbusd and one
// pointer set per token; its 24 accumulators (12 integer dots, 12 float sums) fill the 32 vector registers. The
// tokens' activations must be evenly strided (one quantized chunk, as row_tiles_matmul lays them out), so that one
// pointer per token and shared offsets reach their values, scales and zero points. Per token and row the integer dot
// and the float steps are those of the row-tile GEMV (the batch-invariance contract, quant_matmul.h): every output
// keeps its bits.
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

constexpr int kPrefetchBytes = 2048;
constexpr int kTokens = 6;  // tokens per register block
constexpr int kTiles = 2;   // row tiles per register block

// Where the tokens' activations are, relative to each token's q: the same offsets for every token of a chunk.
struct Strided {
  const int8_t* q0 = nullptr;
  int64_t stride = 0;    // bytes from one token's q to the next's
  int64_t d_off = 0;     // bytes from q to d (block scales)
  int64_t zp_off = 0;    // bytes from q to the type's zero points (Q4_0, Q8_0)
  int64_t s_off = 0;     // bytes from q to s (block float sums: Q4_K's mins)
  int64_t sum4_off = 0;  // bytes from q to sum4 (Q6_K's zero point)
};

inline int64_t bytes_between(const void* p, const void* base) {
  return static_cast<const char*>(p) - static_cast<const char*>(base);
}

bool strided_tokens(const ActQ8* a, int n, uint32_t packing, Strided& s) {
  auto zero_points = [&](const ActQ8& x) { return packing == kPackQ8_0Rows16 ? x.zero_point_q8 : x.zero_point_q4; };
  s.q0 = a[0].q;
  s.stride = n > 1 ? bytes_between(a[1].q, a[0].q) : 0;
  s.d_off = bytes_between(a[0].d, a[0].q);
  s.zp_off = bytes_between(zero_points(a[0]), a[0].q);
  s.s_off = bytes_between(a[0].s, a[0].q);
  s.sum4_off = bytes_between(a[0].sum4, a[0].q);
  for (int t = 0; t < n; ++t) {
    const ActQ8& x = a[t];
    if (bytes_between(x.q, a[0].q) != t * s.stride || bytes_between(x.d, x.q) != s.d_off ||
        bytes_between(zero_points(x), x.q) != s.zp_off || bytes_between(x.s, x.q) != s.s_off ||
        bytes_between(x.sum4, x.q) != s.sum4_off)
      return false;
  }
  return true;
}

template <typename T>
inline T at(const int8_t* q, int64_t offset) {
  T v;
  std::memcpy(&v, reinterpret_cast<const char*>(q) + offset, sizeof(T));
  return v;
}

// The weight layouts. A unit is what one integer dot covers (a block of 32 values; Q6_K: a sub-block of 16), in
// groups of 4 values; the per-unit float steps are the row-tile GEMV's for that type.
struct Q4_0Kind {
  static constexpr int kGroups = 8, kUnitBytes = 256;
  static constexpr bool kNibbles = true, kMins = false;
  static int64_t units(const MatrixView& w) { return w.n_cols / 32; }
  static int64_t offset(int64_t u) { return 256 * u; }
  static __m512 scale(const MatrixView& w, const uint8_t* tile, int64_t u) {
    return half16_ps(tile + (w.n_cols / 32) * 256 + 32 * u);
  }
  static int32_t zero_point(const Strided& s, const int8_t* q, int64_t u) { return at<int32_t>(q, s.zp_off + 4 * u); }
  static int64_t act_col(int64_t u) { return 32 * u; }
  static int64_t act_block(int64_t u) { return u; }
};
struct Q8_0Kind {
  static constexpr int kGroups = 8, kUnitBytes = 512;
  static constexpr bool kNibbles = false, kMins = false;
  static int64_t units(const MatrixView& w) { return w.n_cols / 32; }
  static int64_t offset(int64_t u) { return 512 * u; }
  static __m512 scale(const MatrixView& w, const uint8_t* tile, int64_t u) {
    return half16_ps(tile + (w.n_cols / 32) * 512 + 32 * u);
  }
  static int32_t zero_point(const Strided& s, const int8_t* q, int64_t u) { return at<int32_t>(q, s.zp_off + 4 * u); }
  static int64_t act_col(int64_t u) { return 32 * u; }
  static int64_t act_block(int64_t u) { return u; }
};
// Q4_K: sub-block j of each super-block (Q4_0's nibble layout, no zero point); scale d * sc_j, min dmin * m_j.
struct Q4_KKind {
  static constexpr int kGroups = 8, kUnitBytes = 256;
  static constexpr bool kNibbles = true, kMins = true;
  static int64_t units(const MatrixView& w) { return w.n_cols / 32; }
  static int64_t offset(int64_t u) { return u / 8 * kPackQ4_KSuperBytes + 256 * (u % 8); }
  static __m512 scale(const MatrixView&, const uint8_t* tile, int64_t u) {
    const uint8_t* p = tile + u / 8 * kPackQ4_KSuperBytes;
    return _mm512_mul_ps(bytes16_ps<false>(p + 2112 + 16 * (u % 8)), half16_ps(p + 2048));
  }
  static __m512 min(const uint8_t* tile, int64_t u) {
    const uint8_t* p = tile + u / 8 * kPackQ4_KSuperBytes;
    return _mm512_mul_ps(bytes16_ps<false>(p + 2240 + 16 * (u % 8)), half16_ps(p + 2080));
  }
  static int32_t zero_point(const Strided&, const int8_t*, int64_t) { return 0; }
  static int64_t act_col(int64_t u) { return 32 * u; }
  static int64_t act_block(int64_t u) { return u; }
};
// Q6_K: 16-value sub-blocks (values + 32: the zero point is -32 x the activations' sum), scale d * sc_j, the
// activations' scale of the 32-value block the sub-block lies in.
struct Q6_KKind {
  static constexpr int kGroups = 4, kUnitBytes = 192;
  static constexpr bool kNibbles = false, kMins = false;
  static int64_t units(const MatrixView& w) { return w.n_cols / 16; }
  static int64_t offset(int64_t u) { return u / 16 * kPackQ6_KSuperBytes + 192 * (u % 16); }
  static __m512 scale(const MatrixView&, const uint8_t* tile, int64_t u) {
    const uint8_t* p = tile + u / 16 * kPackQ6_KSuperBytes;
    return _mm512_mul_ps(bytes16_ps<true>(p + 3104 + 16 * (u % 16)), half16_ps(p + 3072));
  }
  static int32_t zero_point(const Strided& s, const int8_t* q, int64_t u) {
    const int64_t o = s.sum4_off + 16 * u;
    return -32 * (at<int32_t>(q, o) + at<int32_t>(q, o + 4) + at<int32_t>(q, o + 8) + at<int32_t>(q, o + 12));
  }
  static int64_t act_col(int64_t u) { return 16 * u; }
  static int64_t act_block(int64_t u) { return u / 2; }
};

// kR row tiles from `tile` times kT tokens from s.q0 + t0 * stride: token t's outputs of tile r to
// y + t * y_stride + 16 * r.
template <class K, int kR, int kT>
void gemm_block(const MatrixView& w, const Strided& s, int t0, int64_t tile, float* y, int64_t y_stride) {
  const int64_t n_units = K::units(w);
  const int64_t tile_bytes = kPackTileRows * static_cast<int64_t>(w.row_bytes);
  const uint8_t* base = row_tile_base(w, tile);
  const __m512i m4 = _mm512_set1_epi8(0x0F);
  const int8_t* q[kT];
  for (int t = 0; t < kT; ++t) q[t] = s.q0 + (t0 + t) * s.stride;
  __m512 acc[kR][kT];
  for (auto& row : acc)
    for (auto& v : row) v = _mm512_setzero_ps();
  // Q4_K's min slots (slot u % 16 of each row), in memory: in registers they would crowd out the dots.
  alignas(64) float slot[K::kMins ? kR * kT : 1][16][16];
  if constexpr (K::kMins) std::memset(slot, 0, sizeof(slot));
  for (int64_t u = 0; u < n_units; ++u) {
    __m512i dot[kR][kT];
#pragma GCC unroll 8
    for (int t = 0; t < kT; ++t) {
      const __m512i zp = _mm512_set1_epi32(K::zero_point(s, q[t], u));
      for (int r = 0; r < kR; ++r) dot[r][t] = zp;
    }
    for (int r = 0; r < kR; ++r)
      for (int l = 0; l < K::kUnitBytes; l += 64)
        _mm_prefetch(reinterpret_cast<const char*>(base + r * tile_bytes + K::offset(u) + l + kPrefetchBytes),
                     _MM_HINT_T0);
    const int64_t col = K::act_col(u);
    // Group k: values 4k .. 4k + 3 of the unit for each tile's 16 rows, times every token's 4 activations there.
    auto group = [&](const __m512i* wv, int k) {
#pragma GCC unroll 8
      for (int t = 0; t < kT; ++t) {
        const __m512i bc = broadcast4(q[t] + col + 4 * k);
        for (int r = 0; r < kR; ++r) dot[r][t] = _mm512_dpbusd_epi32(dot[r][t], wv[r], bc);
      }
    };
    if constexpr (K::kNibbles) {
#pragma GCC unroll 4
      for (int sub = 0; sub < 4; ++sub) {
        __m512i lo[kR], hi[kR];
        for (int r = 0; r < kR; ++r) {
          const __m512i z = _mm512_loadu_si512(base + r * tile_bytes + K::offset(u) + 64 * sub);
          lo[r] = _mm512_and_si512(z, m4);
          hi[r] = _mm512_and_si512(_mm512_srli_epi16(z, 4), m4);
        }
        group(lo, 2 * sub);
        group(hi, 2 * sub + 1);
      }
    } else if constexpr (K::kGroups == 4) {  // Q6_K
      __m512i v[kR][4];
      for (int r = 0; r < kR; ++r) q6_k_row_tile_values(base + r * tile_bytes + K::offset(u), v[r]);
#pragma GCC unroll 4
      for (int k = 0; k < 4; ++k) {
        __m512i wv[kR];
        for (int r = 0; r < kR; ++r) wv[r] = v[r][k];
        group(wv, k);
      }
    } else {
#pragma GCC unroll 8
      for (int k = 0; k < 8; ++k) {
        __m512i wv[kR];
        for (int r = 0; r < kR; ++r) wv[r] = _mm512_loadu_si512(base + r * tile_bytes + K::offset(u) + 64 * k);
        group(wv, k);
      }
    }
    __m512 sc[kR];
    for (int r = 0; r < kR; ++r) sc[r] = K::scale(w, base + r * tile_bytes, u);
#pragma GCC unroll 8
    for (int t = 0; t < kT; ++t) {
      const __m512 ad = _mm512_set1_ps(at<float>(q[t], s.d_off + 4 * K::act_block(u)));
      for (int r = 0; r < kR; ++r)
        acc[r][t] = _mm512_fmadd_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(dot[r][t]), ad), sc[r], acc[r][t]);
    }
    if constexpr (K::kMins) {
      for (int r = 0; r < kR; ++r) {
        const __m512 m = K::min(base + r * tile_bytes, u);
        for (int t = 0; t < kT; ++t) {
          float* sl = slot[r * kT + t][u % 16];
          _mm512_store_ps(sl, _mm512_fnmadd_ps(m, _mm512_set1_ps(at<float>(q[t], s.s_off + 4 * u)), _mm512_load_ps(sl)));
        }
      }
    }
  }
  for (int r = 0; r < kR; ++r)
    for (int t = 0; t < kT; ++t) {
      __m512 out = acc[r][t];
      if constexpr (K::kMins) {
        __m512 slots[16];
        for (int i = 0; i < 16; ++i) slots[i] = _mm512_load_ps(slot[r * kT + t][i]);
        out = _mm512_add_ps(out, tree_sum16(slots));
      }
      _mm512_storeu_ps(y + t * y_stride + 16 * r, out);
    }
}

// kR tiles from `tile` times tokens [0, n): blocks of kTokens, then one block of the rest.
template <class K, int kR>
void gemm_tiles(const MatrixView& w, const Strided& s, int n, int64_t tile, float* y, int64_t y_stride) {
  int t0 = 0;
  for (; t0 + kTokens <= n; t0 += kTokens) gemm_block<K, kR, kTokens>(w, s, t0, tile, y + t0 * y_stride, y_stride);
  float* yt = y + t0 * y_stride;
  switch (n - t0) {
    case 5: return gemm_block<K, kR, 5>(w, s, t0, tile, yt, y_stride);
    case 4: return gemm_block<K, kR, 4>(w, s, t0, tile, yt, y_stride);
    case 3: return gemm_block<K, kR, 3>(w, s, t0, tile, yt, y_stride);
    case 2: return gemm_block<K, kR, 2>(w, s, t0, tile, yt, y_stride);
    case 1: return gemm_block<K, kR, 1>(w, s, t0, tile, yt, y_stride);
    default: return;
  }
}

template <class K>
bool row_tile_gemm(const MatrixView& w, const ActQ8* a, int n_tokens, int64_t first, int64_t n_tiles, float* y,
                   int64_t y_stride) {
  Strided s;
  if (!strided_tokens(a, n_tokens, w.packing, s)) return false;
  int64_t tile = first;
  for (; tile + kTiles <= first + n_tiles; tile += kTiles)
    gemm_tiles<K, kTiles>(w, s, n_tokens, tile, y + tile * kPackTileRows, y_stride);
  if (tile < first + n_tiles) gemm_tiles<K, 1>(w, s, n_tokens, tile, y + tile * kPackTileRows, y_stride);
  return true;
}

}  // namespace

RowTileGemmFn row_tile_gemm_kernel(uint32_t packing) {
  switch (packing) {
    case kPackQ4_0Rows16: return row_tile_gemm<Q4_0Kind>;
    case kPackQ8_0Rows16: return row_tile_gemm<Q8_0Kind>;
    case kPackQ4_KRows16: return row_tile_gemm<Q4_KKind>;
    case kPackQ6_KRows16: return row_tile_gemm<Q6_KKind>;
    default: return nullptr;
  }
}

}  // namespace kairo::kernels::avx512
