// The many-token matmul of legacy row tiles (Q4_0, Q8_0) on AVX-512 CPUs without a tile unit: a register-blocked
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
  int64_t stride = 0;   // bytes from one token's q to the next's
  int64_t d_off = 0;    // bytes from q to d
  int64_t zp_off = 0;   // bytes from q to the type's zero points
};

bool strided_tokens(const ActQ8* a, int n, bool q4, Strided& s) {
  auto bytes = [](const void* p, const void* base) {
    return static_cast<const char*>(p) - static_cast<const char*>(base);
  };
  s.q0 = a[0].q;
  s.stride = n > 1 ? bytes(a[1].q, a[0].q) : 0;
  s.d_off = bytes(a[0].d, a[0].q);
  s.zp_off = bytes(q4 ? a[0].zero_point_q4 : a[0].zero_point_q8, a[0].q);
  for (int t = 0; t < n; ++t) {
    const int32_t* zp = q4 ? a[t].zero_point_q4 : a[t].zero_point_q8;
    if (bytes(a[t].q, a[0].q) != t * s.stride || bytes(a[t].d, a[t].q) != s.d_off || bytes(zp, a[t].q) != s.zp_off)
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

// kR row tiles from `tile` times kT tokens from s.q0 + t0 * stride: token t's outputs of tile r to
// y + t * y_stride + 16 * r.
template <bool kQ4, int kR, int kT>
void gemm_block(const MatrixView& w, const Strided& s, int t0, int64_t tile, float* y, int64_t y_stride) {
  constexpr int kValueBytes = kQ4 ? 256 : 512;
  const int64_t n_blocks = w.n_cols / 32;
  const int64_t tile_bytes = kPackTileRows * static_cast<int64_t>(w.row_bytes);
  const uint8_t* values = row_tile_base(w, tile);
  const uint8_t* scales = values + n_blocks * kValueBytes;
  const __m512i m4 = _mm512_set1_epi8(0x0F);
  const int8_t* q[kT];
  for (int t = 0; t < kT; ++t) q[t] = s.q0 + (t0 + t) * s.stride;
  __m512 acc[kR][kT];
  for (auto& row : acc)
    for (auto& v : row) v = _mm512_setzero_ps();
  for (int64_t b = 0; b < n_blocks; ++b) {
    __m512i dot[kR][kT];
#pragma GCC unroll 8
    for (int t = 0; t < kT; ++t) {
      const __m512i zp = _mm512_set1_epi32(at<int32_t>(q[t], s.zp_off + 4 * b));
      for (int r = 0; r < kR; ++r) dot[r][t] = zp;
    }
    for (int r = 0; r < kR; ++r)
      for (int l = 0; l < kValueBytes; l += 64)
        _mm_prefetch(reinterpret_cast<const char*>(values + r * tile_bytes + b * kValueBytes + l + kPrefetchBytes),
                     _MM_HINT_T0);
    // Group k: values 4k .. 4k + 3 of the block for each tile's 16 rows, times every token's 4 activations there.
    auto group = [&](const __m512i* wv, int k) {
#pragma GCC unroll 8
      for (int t = 0; t < kT; ++t) {
        const __m512i bc = broadcast4(q[t] + 32 * b + 4 * k);
        for (int r = 0; r < kR; ++r) dot[r][t] = _mm512_dpbusd_epi32(dot[r][t], wv[r], bc);
      }
    };
    if constexpr (kQ4) {
#pragma GCC unroll 4
      for (int sub = 0; sub < 4; ++sub) {
        __m512i lo[kR], hi[kR];
        for (int r = 0; r < kR; ++r) {
          const __m512i z = _mm512_loadu_si512(values + r * tile_bytes + b * kValueBytes + 64 * sub);
          lo[r] = _mm512_and_si512(z, m4);
          hi[r] = _mm512_and_si512(_mm512_srli_epi16(z, 4), m4);
        }
        group(lo, 2 * sub);
        group(hi, 2 * sub + 1);
      }
    } else {
#pragma GCC unroll 8
      for (int k = 0; k < 8; ++k) {
        __m512i wv[kR];
        for (int r = 0; r < kR; ++r) wv[r] = _mm512_loadu_si512(values + r * tile_bytes + b * kValueBytes + 64 * k);
        group(wv, k);
      }
    }
    __m512 dw[kR];
    for (int r = 0; r < kR; ++r)
      dw[r] = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(scales + r * tile_bytes + 32 * b)));
#pragma GCC unroll 8
    for (int t = 0; t < kT; ++t) {
      const __m512 ad = _mm512_set1_ps(at<float>(q[t], s.d_off + 4 * b));
      for (int r = 0; r < kR; ++r)
        acc[r][t] = _mm512_fmadd_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(dot[r][t]), ad), dw[r], acc[r][t]);
    }
  }
  for (int r = 0; r < kR; ++r)
    for (int t = 0; t < kT; ++t) _mm512_storeu_ps(y + t * y_stride + 16 * r, acc[r][t]);
}

// kR tiles from `tile` times tokens [0, n): blocks of kTokens, then one block of the rest.
template <bool kQ4, int kR>
void gemm_tiles(const MatrixView& w, const Strided& s, int n, int64_t tile, float* y, int64_t y_stride) {
  int t0 = 0;
  for (; t0 + kTokens <= n; t0 += kTokens) gemm_block<kQ4, kR, kTokens>(w, s, t0, tile, y + t0 * y_stride, y_stride);
  float* yt = y + t0 * y_stride;
  switch (n - t0) {
    case 5: return gemm_block<kQ4, kR, 5>(w, s, t0, tile, yt, y_stride);
    case 4: return gemm_block<kQ4, kR, 4>(w, s, t0, tile, yt, y_stride);
    case 3: return gemm_block<kQ4, kR, 3>(w, s, t0, tile, yt, y_stride);
    case 2: return gemm_block<kQ4, kR, 2>(w, s, t0, tile, yt, y_stride);
    case 1: return gemm_block<kQ4, kR, 1>(w, s, t0, tile, yt, y_stride);
    default: return;
  }
}

template <bool kQ4>
bool row_tile_gemm(const MatrixView& w, const ActQ8* a, int n_tokens, int64_t first, int64_t n_tiles, float* y,
                   int64_t y_stride) {
  Strided s;
  if (!strided_tokens(a, n_tokens, kQ4, s)) return false;
  int64_t tile = first;
  for (; tile + kTiles <= first + n_tiles; tile += kTiles)
    gemm_tiles<kQ4, kTiles>(w, s, n_tokens, tile, y + tile * kPackTileRows, y_stride);
  if (tile < first + n_tiles) gemm_tiles<kQ4, 1>(w, s, n_tokens, tile, y + tile * kPackTileRows, y_stride);
  return true;
}

}  // namespace

RowTileGemmFn row_tile_gemm_kernel(uint32_t packing) {
  switch (packing) {
    case kPackQ4_0Rows16: return row_tile_gemm<true>;
    case kPackQ8_0Rows16: return row_tile_gemm<false>;
    default: return nullptr;
  }
}

}  // namespace kairo::kernels::avx512
