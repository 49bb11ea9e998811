#pragma once
// Internal interface of the int8 matmul kernels for quantized weights (AVX-512 VNNI and AMX). matmul_avx512.cpp
// drives them: it quantizes the activations once, splits output rows over threads, and picks
// GEMV (one token) or GEMM (a tile of rows unpacked to int8, times tiles of 16 tokens).
#include <immintrin.h>

#include <cstdint>

#include "kernels/backend.h"
#include "kernels/cpu/act_quant.h"

namespace kairo::kernels::avx512 {

// Batch invariance: one token's outputs must not depend on the other tokens of the matmul, so the one-token GEMV
// and the many-token GEMM do the same arithmetic. Per output (row r, token t), with w_b, a_b the int8 blocks
// (zero points removed), da_b the activation block scale, dw_b / m_b the weight block scale / min, sa_b the
// activation block's float sum:
//   c_b = float(integer dot of w_b and a_b) * da_b
//   acc = 0;  for b in block order: acc = fma(c_b, dw_b, acc)
//   types with mins: mterm = tree_sum16(slot), slot[j] = 0; for b in order: slot[b % 16] = fma(m_b, sa_b, slot[b % 16])
//   y = acc (+ mterm)
// (tree_sum16 / sum_lanes16 in decode_avx512.h). Integer dots are exact, so only this float part must match;
// GEMV vectorizes it over 16 rows, GEMM over 16 tokens.

// MatrixView::packing values of this backend family: legacy blocks regrouped 16 at a time (512 columns) with the
// values of the 16 blocks interleaved so that each 4-byte vpdpbusd lane belongs to one block: Q8_0 byte
// 64k + 4j + i = value 4k + i of block j, stored + 128 (unsigned); Q4_0 byte 4j + i of 64-byte vector s = values
// 8s + i (low nibble) and 8s + 4 + i (high nibble) of block j. Then the 16 f16 scales, so one-token kernels get
// whole block sums per lane and 16 scales with one load. Rows are zero-padded to whole groups.
enum Packing : uint32_t { kPackNone = 0, kPackQ4_0x16 = 3, kPackQ8_0x16 = 4 };
inline constexpr int kPackGroupCols = 512;
inline constexpr int kPackQ4_0GroupBytes = 256 + 32;
inline constexpr int kPackQ8_0GroupBytes = 512 + 32;

// The packed copy of w (Backend::pack_weights), or an empty result for types without a packed layout.
PackedMatrix pack_weights(const MatrixView& w);

// GEMV works on tiles of 16 rows: the kernel writes each row's c_b and dw_b (and its min slots), then
// gemv_finish reduces them per row in block order with the 16 rows in vector lanes.
inline constexpr int kGemvRows = 16;
struct GemvTile {
  int64_t stride = 0;      // floats per row: n_blocks rounded up to 16
  float* c = nullptr;      // [16][stride] c_b
  float* d = nullptr;      // [16][stride] dw_b
  float* mslot = nullptr;  // [16][16] the 16 min slots of each row (types with mins)
};
size_t gemv_tile_bytes(int64_t n_blocks);
GemvTile gemv_tile_layout(void* mem, int64_t n_blocks);
// Rows [r0, r0 + n) (n <= 16) of w times one quantized token into tile rows 0..n-1.
using GemvFn = void (*)(const MatrixView& w, const cpu::ActQ8& a, int64_t r0, int n, GemvTile& t);
// The GEMV kernel for a weight layout, or nullptr when there is none.
GemvFn gemv_kernel(DType type, uint32_t packing);
GemvFn gemv_packed_kernel(uint32_t packing);
// Block count, block size (32; 16 for Q6_K) and whether the type has mins.
int block_k_of(DType type);
bool has_min(DType type);

inline constexpr int kTileRows = 16;  // weight rows unpacked together (AMX A tile: 16 rows)

// Weight rows unpacked for the GEMM kernels: int8 values (zero point removed) with one scale (and min) per block
// of block_k columns (32; 16 for Q6_K). Rows past the matrix end are zero.
struct WeightTile {
  int block_k = 32;
  int64_t n_blocks = 0;  // n_cols / block_k
  // Block-major so one block of 16 rows is 16 * block_k contiguous bytes: an AMX A tile loads whole cache lines.
  int8_t* q = nullptr;   // [n_blocks][16 rows][block_k]
  int64_t scale_stride = 0;  // floats per row of d / m / corr: n_blocks rounded up to 16 (whole-vector stores)
  float* d = nullptr;    // [16 rows][scale_stride] scale of (row, block)
  float* m = nullptr;    // [16 rows][scale_stride] additive min (value = d * q + m), or nullptr for types without mins
  int32_t* corr = nullptr;  // [16 rows][scale_stride] -128 * sum of the block's q (VNNI's unsigned-activation fix)
};

// Bytes of scratch for one tile of n_cols; lays out `t` in `mem`.
size_t weight_tile_bytes(DType type, int64_t n_cols);
void weight_tile_layout(DType type, int64_t n_cols, void* mem, WeightTile& t);
// Unpacks rows [r0, r0 + 16) (clipped to the matrix) into t; with_corr also fills t.corr.
void unpack_weight_tile(const MatrixView& w, int64_t r0, bool with_corr, WeightTile& t);
bool has_gemm(DType type);

// out[token][row] (16 x 16) = tile rows times activation tile `tile` (u8 activations).
void gemm_tile_vnni(const WeightTile& w, const cpu::ActTiles& a, int64_t tile, float* out);
// acc[row] (lanes: the 16 tokens of `tile`) += the min terms of the tile's rows (w.m != nullptr).
void add_min_terms(const WeightTile& w, const cpu::ActTiles& a, int64_t tile, __m512* acc);

}  // namespace kairo::kernels::avx512

namespace kairo::kernels::amx {
// As gemm_tile_vnni with AMX tdpbssd (s8 activations). The calling thread must have its tile config loaded
// (configure_tiles) for w.block_k.
void configure_tiles(int block_k);
void release_tiles();
void gemm_tile_amx(const avx512::WeightTile& w, const cpu::ActTiles& a, int64_t tile, float* out);
}  // namespace kairo::kernels::amx
