// Many-token matmul tile with AMX: tdpbssd multiplies a 16-row x block_k weight tile by a block_k x 16-token
// activation tile into 16x16 int32, per quantization block (scales differ per block, so the int32 result is
// scaled into float accumulators after each block).
// GCC 12 reports its own AVX-512 cast intrinsics (deliberately undefined upper lanes) as maybe-uninitialized.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "kernels/cpu/amx_block_pairs.h"
#include "kernels/cpu/amx_tile_config.h"
#include "kernels/cpu/decode_avx512.h"
#include "kernels/cpu/quant_matmul.h"

namespace kairo::kernels::amx {
namespace {

constexpr int kGroup = 2;  // blocks per set of result tiles

inline const uint8_t* b_tile(const avx512::WeightTile& w, const cpu::ActTiles& a, int64_t tile, int64_t b) {
  return a.q_at(tile, b * w.block_k / 32) + (b * w.block_k % 32) / 4 * 64;
}

// The weight tile's block b as the A operand and the activation tile's as B.
inline BlockOperands block_operands(const avx512::WeightTile& w, const cpu::ActTiles& a, int64_t tile, int64_t b) {
  return {w.q + b * w.block_k * 16, w.block_k, b_tile(w, a, tile, b), 64};
}

// Starts the int32 products of blocks [b0, b0 + n) (n <= 2) in result set `set`.
inline void start_products(const avx512::WeightTile& w, const cpu::ActTiles& a, int64_t tile, int64_t b0, int n,
                           int set) {
  start_block_pair(set, n, block_operands(w, a, tile, b0),
                   n > 1 ? block_operands(w, a, tile, b0 + 1) : BlockOperands{});
}

// acc[row] = fma(c[row] * activation scales, weight scale, acc[row]): c_b * dw_b in block order (quant_matmul.h).
inline void scale_block(const int32_t* c, const avx512::WeightTile& w, const cpu::ActTiles& a, int64_t tile,
                        int64_t b, __m512* acc) {
  const int64_t ab = b * w.block_k / 32;
  const __m512 da = _mm512_load_ps(a.d_at(tile, ab));
  const float* d = w.d + b;
  for (int i = 0; i < 16; ++i) {
    const __m512 ci = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_load_si512(c + 16 * i)), da);
    acc[i] = _mm512_fmadd_ps(ci, _mm512_set1_ps(d[i * w.scale_stride]), acc[i]);
  }
}

// Software-pipelined: the products of the next pair of blocks are issued before the current pair's results are
// stored, so a tile store never waits on a multiply just issued, and the tile unit works while the vector units
// scale the previous results into the float accumulators.
void tile_kernel(const avx512::WeightTile& w, const cpu::ActTiles& a, int64_t tile, float* out) {
  alignas(64) int32_t c[kGroup][256];
  __m512 acc[16];
  for (auto& v : acc) v = _mm512_setzero_ps();
  const int64_t n_groups = (w.n_blocks + kGroup - 1) / kGroup;
  auto group_size = [&](int64_t g) { return static_cast<int>(std::min<int64_t>(kGroup, w.n_blocks - g * kGroup)); };
  start_products(w, a, tile, 0, group_size(0), 0);
  for (int64_t g = 0; g < n_groups; ++g) {
    if (g + 1 < n_groups)
      start_products(w, a, tile, (g + 1) * kGroup, group_size(g + 1), static_cast<int>((g + 1) & 1));
    const int n = group_size(g);
    store_block_pair(static_cast<int>(g & 1), n, c);
    for (int j = 0; j < n; ++j) scale_block(c[j], w, a, tile, g * kGroup + j, acc);
  }
  if (w.m != nullptr) avx512::add_min_terms(w, a, tile, acc);
  avx512::store_transposed_16x16(acc, out);
}

}  // namespace

void configure_tiles(int block_k) {
  TileConfig cfg;
  for (int t : {0, 1, 2, 3}) {
    cfg.rows[t] = 16;
    cfg.colsb[t] = 64;
  }
  for (int t : {kTileA0, kTileA1}) {
    cfg.rows[t] = 16;
    cfg.colsb[t] = static_cast<uint16_t>(block_k);
  }
  for (int t : {kTileB0, kTileB1}) {
    cfg.rows[t] = static_cast<uint8_t>(block_k / 4);
    cfg.colsb[t] = 64;
  }
  load_tile_config(cfg);
}

void release_tiles() { _tile_release(); }

void gemm_tile_amx(const avx512::WeightTile& w, const cpu::ActTiles& a, int64_t tile, float* out) {
  tile_kernel(w, a, tile, out);
}

}  // namespace kairo::kernels::amx
