#pragma once
// Internal interface of the int8 matmul kernels for quantized weights (AVX-512 VNNI and AMX). matmul_avx512.cpp
// drives them: it quantizes the activations once, splits output rows over threads, and picks
// GEMV (one token) or GEMM (a tile of rows unpacked to int8, times tiles of 16 tokens).
#include <cstdint>

#include "kernels/backend.h"
#include "kernels/cpu/act_quant.h"

namespace kairo::kernels::avx512 {

// MatrixView::packing values of this backend family: legacy blocks regrouped 16 at a time (512 columns): the
// values of the 16 blocks first, then their 16 f16 scales, so one-token kernels load 16 scales with one
// instruction. Q4_0 nibbles are reordered per 128 columns: byte j holds column j (low) and column 64 + j (high).
// Rows are zero-padded to whole groups.
enum Packing : uint32_t { kPackNone = 0, kPackQ4_0x16 = 1, kPackQ8_0x16 = 2 };
inline constexpr int kPackGroupCols = 512;
inline constexpr int kPackQ4_0GroupBytes = 256 + 32;
inline constexpr int kPackQ8_0GroupBytes = 512 + 32;

// The packed copy of w (Backend::pack_weights), or an empty result for types without a packed layout.
PackedMatrix pack_weights(const MatrixView& w);

// y[r] for rows [r0, r1) of w times one quantized token.
using GemvFn = void (*)(const MatrixView& w, const cpu::ActQ8& a, float* y, int64_t r0, int64_t r1);
// The GEMV kernel for a weight layout, or nullptr when there is none.
GemvFn gemv_kernel(DType type, uint32_t packing);
GemvFn gemv_packed_kernel(uint32_t packing);

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

}  // namespace kairo::kernels::avx512

namespace kairo::kernels::amx {
// As gemm_tile_vnni with AMX tdpbssd (s8 activations). The calling thread must have its tile config loaded
// (configure_tiles) for w.block_k.
void configure_tiles(int block_k);
void release_tiles();
void gemm_tile_amx(const avx512::WeightTile& w, const cpu::ActTiles& a, int64_t tile, float* out);
}  // namespace kairo::kernels::amx
