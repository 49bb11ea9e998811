#pragma once
// The tile-unit half of the AMX kernels' software pipeline, shared by gemm_amx.cpp and gemm_row_tiles_amx.cpp.
// Per-block scales differ, so every quantization block gets its own int32 result tile; blocks go in pairs, and two
// sets of result tiles (set 0: tmm0-1, set 1: tmm2-3) alternate so the tile unit multiplies one pair while the
// vector units scale the other. Operand tiles: tmm4/5 (A of the pair's first/second block) and tmm6/7 (B). The
// kernels configure those shapes (amx_tile_config.h). Include only from files compiled with AMX flags.
#include <immintrin.h>

#include <cstdint>

#include "kernels/cpu/amx_tile_config.h"

namespace kairo::kernels::amx {

// One block's A and B operands (row strides in bytes). The compiler is told each load reads up to kMaxTileBytes.
struct BlockOperands {
  const void* a;
  long a_stride;
  const void* b;
  long b_stride;
};
inline constexpr int kMaxTileBytes = 1024;

#define KAIRO_BLOCK_PRODUCT(C, A, B, ops)                                \
  _tile_zero(C);                                                         \
  KAIRO_TILE_LOAD(A, (ops).a, (ops).a_stride, ::kairo::kernels::amx::kMaxTileBytes); \
  KAIRO_TILE_LOAD(B, (ops).b, (ops).b_stride, ::kairo::kernels::amx::kMaxTileBytes); \
  _tile_dpbssd(C, A, B);

// Issues the int32 products of n (1 or 2) blocks into result set `set`.
inline void start_block_pair(int set, int n, const BlockOperands& first, const BlockOperands& second) {
  if (set == 0) {
    KAIRO_BLOCK_PRODUCT(0, 4, 6, first)
    if (n > 1) { KAIRO_BLOCK_PRODUCT(1, 5, 7, second) }
  } else {
    KAIRO_BLOCK_PRODUCT(2, 4, 6, first)
    if (n > 1) { KAIRO_BLOCK_PRODUCT(3, 5, 7, second) }
  }
}
#undef KAIRO_BLOCK_PRODUCT

// Stores result set `set` (n blocks) to c[0..n): 16 rows of 16 int32 each.
inline void store_block_pair(int set, int n, int32_t (*c)[256]) {
  if (set == 0) {
    KAIRO_TILE_STORE(0, c[0], 64, 1024);
    if (n > 1) KAIRO_TILE_STORE(1, c[1], 64, 1024);
  } else {
    KAIRO_TILE_STORE(2, c[0], 64, 1024);
    if (n > 1) KAIRO_TILE_STORE(3, c[1], 64, 1024);
  }
}

// Tile register ids of the operands, for the kernels' tile configurations.
inline constexpr int kTileA0 = 4, kTileA1 = 5, kTileB0 = 6, kTileB1 = 7;

}  // namespace kairo::kernels::amx
