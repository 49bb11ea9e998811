#pragma once
// Internal interface of the int8 matmul kernels for quantized weights (AVX-512 VNNI and AMX). matmul_avx512.cpp
// drives them: it quantizes the activations once, splits output rows over threads, and picks
// GEMV (one token) or GEMM (a tile of rows unpacked to int8, times tiles of 16 tokens).
// The row-tile layouts, their packing and the kernel signatures are every ISA's (the AVX2 and NEON kernels read the
// same tiles: the namespace names the ISA they were designed for); the declarations that use x86 vector types are
// compiled on x86-64 only.
#if defined(__x86_64__)
#include <immintrin.h>
#endif

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

// MatrixView::packing values of this backend family: row tiles. Legacy Q4_0 / Q8_0 rows are regrouped 16 at a time
// so that one 64-byte vector holds 4 consecutive values of each of the 16 rows: a vpdpbusd against 4 broadcast
// activation bytes then yields 16 rows' partial dots in its lanes (rows in lanes: no transposes, one sequential
// stream per tile). Tile t (rows 16t .. 16t+15) starts at data + 16 * t * row_bytes; row_bytes is the GGUF row size,
// so a tile holds exactly the GGUF bytes of its 16 rows: first the values of every block, then the f16 scales of
// every block ([block][16 rows]). Values per block: Q8_0 512 bytes, byte 64k + 4r + i = value 4k + i of row r,
// stored + 128 (unsigned); Q4_0 256 bytes, byte 64s + 4r + i = value 8s + i of row r (low nibble) and value
// 8s + 4 + i (high nibble), stored unsigned (q + 8). Rows past the matrix end are zero (scale 0).
//
// K-quants get row tiles too (GEMV only reads them directly; the GEMM unpacks them like GGUF rows). Per super-block
// of 256 columns and tile: Q4_K (2368 bytes = 16 x 148) the 8 sub-blocks' values in the Q4_0 layout above (nibbles
// q, no zero point), then d[16] and dmin[16] (f16), sc[8][16] and m[8][16] (the 6-bit scales and mins as bytes);
// Q6_K (3360 bytes = 16 x 210, as GGUF) per 16-value sub-block 192 bytes: 128 of low nibbles (byte 64t + 4r + i:
// value 8t + i low, 8t + 4 + i high) and 64 of high bit pairs (byte 4r + i, bits 2k..2k+1: value 4k + i), then
// d[16] (f16) and sc[16][16] (int8). row_bytes is the tile's bytes / 16 (Q4_K: 148 per super-block).
//
// MXFP4 row tiles keep the Q4_0 tile layout for the codes (256 bytes per block: byte 64s + 4r + i = code of value
// 8s + i of row r in the low nibble, of value 8s + 4 + i in the high one), then the E8M0 scale bytes of every
// block ([block][16 rows], 16 bytes); the kernels map codes to values with one vpshufb (mxfp4_value_table). They
// have their GEMV and multi-token kernels and no AMX GEMM: many tokens run the multi-token kernels in chunks on
// every AVX-512 CPU.
enum Packing : uint32_t {
  kPackNone = 0,
  kPackQ4_0Rows16 = 5,
  kPackQ8_0Rows16 = 6,
  kPackQ4_KRows16 = 7,
  kPackQ6_KRows16 = 8,
  kPackMXFP4Rows16 = 9,
};
inline constexpr int kPackTileRows = 16;
inline constexpr int64_t kPackQ4_KSuperBytes = 2368;
inline constexpr int64_t kPackQ6_KSuperBytes = 3360;
inline bool is_row_tile_packing(uint32_t packing) { return packing >= kPackQ4_0Rows16 && packing <= kPackMXFP4Rows16; }
// The legacy row tiles, whose blocks the AMX GEMM multiplies in place.
inline bool is_legacy_row_tile_packing(uint32_t packing) {
  return packing == kPackQ4_0Rows16 || packing == kPackQ8_0Rows16;
}
// Row tiles that the AMX GEMMs (and the unpacking for the VNNI GEMM) read: every layout but MXFP4's.
inline bool has_tile_gemm(uint32_t packing) { return is_row_tile_packing(packing) && packing != kPackMXFP4Rows16; }
// Bytes of one block's values for the 16 rows of a legacy tile.
inline int64_t row_tile_value_bytes(uint32_t packing) { return packing == kPackQ4_0Rows16 ? 256 : 512; }
inline const uint8_t* row_tile_base(const MatrixView& w, int64_t tile) {
  return static_cast<const uint8_t*>(w.data) + tile * kPackTileRows * static_cast<int64_t>(w.row_bytes);
}
// K-quant row tiles (Q4_K, Q6_K) of w, or an empty result (pack.cpp dispatches here).
PackedMatrix pack_kquant_row_tiles(const MatrixView& w);

// The packed copy of w (Backend::pack_weights), or an empty result for types without a packed layout.
PackedMatrix pack_weights(const MatrixView& w);

// One-token matmul of row tiles [tile, tile + n_tiles) of a row-tile-packed w: y[0 .. 16 * n_tiles) (all lanes; rows
// past the matrix get 0). Per row the arithmetic of the batch-invariance contract above, with 16 rows in vector lanes.
using RowTileGemvFn = void (*)(const MatrixView& w, const cpu::ActQ8& a, int64_t tile, int n_tiles, float* y);
RowTileGemvFn row_tile_gemv_kernel(uint32_t packing);

// n_tokens (1 to kMaxRowTileTokens) quantized tokens a[0 .. n_tokens) times one whole row tile of a row-tile-packed
// w: token t's 16 outputs to y + t * y_stride. Each block's values are decoded once for all the tokens; per token
// the arithmetic (and so every bit) is the row-tile GEMV's. nullptr for layouts that are not row tiles.
using RowTileTokensFn = void (*)(const MatrixView& w, const cpu::ActQ8* a, int n_tokens, int64_t tile, float* y,
                                 int64_t y_stride);
RowTileTokensFn row_tile_tokens_kernel(uint32_t packing);
// As RowTileTokensFn over the n_tiles whole tiles from `first` (y: the outputs of tile 0, so tile i's start at
// y + 16 * i), for tokens whose activations are evenly strided (one chunk of row_tiles_matmul); false when they are
// not (nothing written: the caller runs the one-tile kernel). nullptr for layouts without one.
using RowTileGemmFn = bool (*)(const MatrixView& w, const cpu::ActQ8* a, int n_tokens, int64_t first, int64_t n_tiles,
                               float* y, int64_t y_stride);
RowTileGemmFn row_tile_gemm_kernel(uint32_t packing);
// Up to this many tokens the multi-token kernel above beats the AMX paths, whose 16-token tile costs the same
// for 1 token as for 16 (kernels_bench Gemm, one layer, 2 threads, ms, multi-token / AMX): Q4_0 8 tokens 1.09 / 1.65,
// 12 about even, 16 2.2 / 1.7 (bench batch decode: 10 sequences +4-8 %, 12 -5 %); the K-quants, which the AMX path
// must first unpack, Q4_K 8 tokens 1.25 / 3.4, 16 2.5 / 3.5, 32 5.5 / 6.2 and Q6_K 8 tokens 1.85 / 4.9-5.6, 16 3.8 /
// 4.8, 32 7.8 / 8.1.
// MXFP4 (no AMX path) takes the K-quants' 32.
inline int64_t max_row_tile_tokens(uint32_t packing) { return is_legacy_row_tile_packing(packing) ? 10 : 32; }
inline constexpr int64_t kMaxRowTileTokens = 32;  // the largest max_row_tile_tokens
// From here the relaxed path beats the exact one: two token tiles share each expanded weight tile (one 16-token tile
// costs more to expand to bf16 than the exact kernel's per-block scaling; bench batch at 16: 197 vs 270 t/s).
inline constexpr int64_t kMinRelaxedTokens = 17;

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
GemvFn gemv_kernel(DType type);
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
#if defined(__x86_64__)
// acc[row] (lanes: the 16 tokens of `tile`) += the min terms of the tile's rows (w.m != nullptr).
void add_min_terms(const WeightTile& w, const cpu::ActTiles& a, int64_t tile, __m512* acc);
#endif

}  // namespace kairo::kernels::avx512

namespace kairo::kernels::amx {
// As gemm_tile_vnni with AMX tdpbssd (s8 activations). The calling thread must have its tile config loaded
// (configure_tiles) for w.block_k.
void configure_tiles(int block_k);
void release_tiles();
void gemm_tile_amx(const avx512::WeightTile& w, const cpu::ActTiles& a, int64_t tile, float* out);

// Row tiles [tile0, tile1) of a row-tile-packed w times every token of `a` into y[n_tokens][w.n_rows], with AMX.
// Loads its own tile configuration and releases the tiles when done. b_scratch: row_tile_b_bytes(w.n_cols),
// 64-byte aligned.
size_t row_tile_b_bytes(int64_t n_cols);
void gemm_row_tiles(const MatrixView& w, const cpu::ActQ8Batch& a, int64_t tile0, int64_t tile1, int8_t* b_scratch,
                    float* y);

// The relaxed path (not the batch-invariance contract: bf16 activations times bf16(q * d), f32 sums over the whole
// row). The activations of token t (x == nullptr: a padding token, zeros) go into the A tiles at `a`
// (act_bf16_tiles_bytes, 64-byte aligned); then row tiles [tile0, tile1) times every token into y.
// b_scratch: row_tile_bf16_b_bytes(w.n_cols), 64-byte aligned.
size_t act_bf16_tiles_bytes(int64_t n_cols, int64_t n_tokens);
void convert_act_bf16(const float* x, int64_t t, int64_t n_cols, uint16_t* a);
size_t row_tile_bf16_b_bytes(int64_t n_cols);
void gemm_row_tiles_bf16(const MatrixView& w, const uint16_t* a, int64_t n_tokens, int64_t tile0, int64_t tile1,
                         uint16_t* b_scratch, float* y);
}  // namespace kairo::kernels::amx
