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

template <int kBlockK>
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
    const float* d = w.d + r0 * w.scale_stride + b;
    const int32_t* corr = w.corr + r0 * w.scale_stride + b;
    for (int i = 0; i < 8; ++i) {
      const int8_t* wq = w.q + (b * kTileRows + r0 + i) * kBlockK;
      __m512i id = _mm512_set1_epi32(corr[i * w.scale_stride]);
      for (int g = 0; g < kGroups; ++g) id = _mm512_dpbusd_epi32(id, av[g], broadcast_dword(wq + 4 * g));
      // c_b * dw_b accumulated in block order (quant_matmul.h): the GEMV's arithmetic exactly.
      const __m512 c = _mm512_mul_ps(_mm512_cvtepi32_ps(id), da);
      acc[i] = _mm512_fmadd_ps(c, _mm512_set1_ps(d[i * w.scale_stride]), acc[i]);
    }
  }
  for (int i = 0; i < 8; ++i) out[r0 + i] = acc[i];
}

}  // namespace

void add_min_terms(const WeightTile& w, const cpu::ActTiles& a, int64_t tile, __m512* acc) {
  for (int i = 0; i < kTileRows; ++i) {
    const float* m = w.m + i * w.scale_stride;
    __m512 slot[16];
    for (auto& v : slot) v = _mm512_setzero_ps();
    for (int64_t b = 0; b < w.n_blocks; b += 16) {
      const bool full = b + 16 <= w.n_blocks;
      for (int j = 0; j < 16; ++j)  // constant slot indices keep the slots in registers
        if (full || b + j < w.n_blocks)
          slot[j] = _mm512_fmadd_ps(_mm512_set1_ps(m[b + j]), _mm512_load_ps(a.s_at(tile, b + j)), slot[j]);
    }
    acc[i] = _mm512_add_ps(acc[i], tree_sum16(slot));
  }
}

void gemm_tile_vnni(const WeightTile& w, const cpu::ActTiles& a, int64_t tile, float* out) {
  __m512 rows[kTileRows];
  for (int r0 = 0; r0 < kTileRows; r0 += 8) {
    if (w.block_k == 16) {
      tile_rows8<16>(w, a, tile, r0, rows);
    } else {
      tile_rows8<32>(w, a, tile, r0, rows);
    }
  }
  if (w.m != nullptr) add_min_terms(w, a, tile, rows);
  store_transposed_16x16(rows, out);
}

}  // namespace kairo::kernels::avx512
