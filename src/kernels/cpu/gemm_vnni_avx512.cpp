// Many-token matmul tile with AVX-512 VNNI: 16 unpacked weight rows x 16 tokens. Vectors run over tokens (the
// activation tile holds, per 4 columns, one dword per token), and each weight dword is broadcast from memory, so
// a block of 32 columns costs 8 vpdpbusd per row and the block's float scaling is shared by 16 tokens at once.
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

inline __m512i broadcast_dword(const int8_t* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return _mm512_set1_epi32(v);
}

template <int kBlockK, bool kMin>
void tile_rows8(const WeightTile& w, const cpu::ActTiles& a, int64_t tile, int r0, __m512* out) {
  constexpr int kGroups = kBlockK / 4;
  __m512 acc[8];
  for (auto& v : acc) v = _mm512_setzero_ps();
  for (int64_t b = 0; b < w.n_blocks; ++b) {
    const int64_t ab = b * kBlockK / 32;  // activation block
    const uint8_t* aq = a.q_at(tile, ab) + (b * kBlockK % 32) / 4 * 64;
    __m512i av[kGroups];
    for (int g = 0; g < kGroups; ++g) av[g] = _mm512_load_si512(aq + 64 * g);
    const __m512 da = _mm512_load_ps(a.d_at(tile, ab));
    __m512 s = _mm512_setzero_ps();
    if constexpr (kMin) s = _mm512_load_ps(a.s_at(tile, ab));
    const float* d = w.d + r0 * w.scale_stride + b;
    const int32_t* corr = w.corr + r0 * w.scale_stride + b;
    for (int i = 0; i < 8; ++i) {
      const int8_t* wq = w.q + (b * kTileRows + r0 + i) * kBlockK;
      __m512i id = _mm512_set1_epi32(corr[i * w.scale_stride]);
      for (int g = 0; g < kGroups; ++g) id = _mm512_dpbusd_epi32(id, av[g], broadcast_dword(wq + 4 * g));
      const __m512 scale = _mm512_mul_ps(da, _mm512_set1_ps(d[i * w.scale_stride]));
      acc[i] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(id), scale, acc[i]);
      if constexpr (kMin) acc[i] = _mm512_fmadd_ps(_mm512_set1_ps(w.m[(r0 + i) * w.scale_stride + b]), s, acc[i]);
    }
  }
  for (int i = 0; i < 8; ++i) out[r0 + i] = acc[i];
}

}  // namespace

void gemm_tile_vnni(const WeightTile& w, const cpu::ActTiles& a, int64_t tile, float* out) {
  __m512 rows[kTileRows];
  for (int r0 = 0; r0 < kTileRows; r0 += 8) {
    if (w.block_k == 16) {
      tile_rows8<16, false>(w, a, tile, r0, rows);
    } else if (w.m != nullptr) {
      tile_rows8<32, true>(w, a, tile, r0, rows);
    } else {
      tile_rows8<32, false>(w, a, tile, r0, rows);
    }
  }
  store_transposed_16x16(rows, out);
}

}  // namespace kairo::kernels::avx512
