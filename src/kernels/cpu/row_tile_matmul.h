#pragma once
// The ISA-independent driver of the row-tile kernels (layouts in quant_matmul.h): the activations quantized once per
// matmul, the row tiles of one or several weights shared out to the threads, and tokens taken through the
// multi-token kernel in chunks. The CPUs without a many-token tile unit (AVX2, AVX-512 without AMX) run every
// row-tile matmul through here, and the AMX backend its few-token ones; each ISA brings its kernels as a
// RowTileKernels table. Every output is the ISA's one-token GEMV's bits (the batch-invariance contract).
#include <cstdint>

#include "kernels/backend.h"
#include "kernels/cpu/act_quant.h"
#include "kernels/cpu/quant_matmul.h"

namespace kairo::kernels::cpu {

// One ISA's row-tile kernels.
struct RowTileKernels {
  void (*quantize)(const float* x, ActQ8& a);
  avx512::RowTileGemvFn (*gemv)(uint32_t packing);
  avx512::RowTileTokensFn (*tokens)(uint32_t packing);
  avx512::RowTileGemmFn (*gemm)(uint32_t packing) = nullptr;  // optional: register-blocked many-token kernels
};

// Row-tile-packed weights that read the same input (one, or Q/K/V, or gate/up) and their outputs. Their row tiles
// are numbered one after another, and each thread takes ranges of that numbering: one parallel pass and one barrier
// for all of them.
struct RowTileSet {
  const MatrixView* ws;
  float* const* ys;
  int n;

  int64_t tiles_of(int i) const { return (ws[i].n_rows + avx512::kPackTileRows - 1) / avx512::kPackTileRows; }
  int64_t total_tiles() const {
    int64_t n_tiles = 0;
    for (int i = 0; i < n; ++i) n_tiles += tiles_of(i);
    return n_tiles;
  }
  // fn(i, first, last) for the row tiles [first, last) of weight i that fall in [g0, g1) of the numbering.
  template <typename Fn>
  void for_ranges(int64_t g0, int64_t g1, Fn&& fn) const {
    int64_t base = 0;
    for (int i = 0; i < n && base < g1; ++i) {
      const int64_t t = tiles_of(i);
      const int64_t first = g0 - base > 0 ? g0 - base : 0, last = g1 - base < t ? g1 - base : t;
      if (first < last) fn(i, first, last);
      base += t;
    }
  }
};

// Row tiles [first, last) of w times n_tokens quantized tokens a[0 .. n_tokens) (any count) into
// y[t * w.n_rows + row]: the multi-token kernel for several tokens, the GEMV kernel for one.
void multiply_row_tiles(const RowTileKernels& k, const MatrixView& w, const ActQ8* a, int64_t n_tokens, int64_t first,
                        int64_t last, float* y);

// Every weight of `set` times n_tokens tokens already quantized (a), the tiles shared out to the threads.
void row_tiles_quantized(const RowTileKernels& k, const RowTileSet& set, const ActQ8* a, int64_t n_tokens,
                         ThreadPool& pool);

// Every weight of `set` (all row-tile packed, n_cols a multiple of 32, at most kMaxRowTileSetMats) times
// x[n_tokens][n_cols]: chunks of at most chunk_tokens (<= kMaxChunkTokens) tokens, each quantized once and multiplied
// in one parallel pass, so each chunk reads the weights once.
inline constexpr int kMaxRowTileSetMats = 8;
inline constexpr int64_t kMaxChunkTokens = 128;
void row_tiles_matmul(const RowTileKernels& k, const RowTileSet& set, const float* x, int64_t n_tokens,
                      int64_t chunk_tokens, ThreadPool& pool);

// Whether `set` can go through row_tiles_matmul: every weight row-tile packed over the same n_cols (a multiple of 32).
bool row_tiles_eligible(const MatrixView* ws, int n_mats);

// A mixture of experts' grouped matmul (Backend::matmul_grouped) through the row-tile kernels: every input row
// quantized once, then every expert's row tiles in one parallel pass split by cost. Groups that `takes` refuses
// (takes(w, n_tokens) false for one of their weights) go through `alone` one by one, gathered.
using MatmulSharedInputFn = void (*)(const MatrixView* ws, int n_mats, const float* x, float* const* ys,
                                     int64_t n_tokens, ThreadPool& pool);
struct GroupedPass {
  const RowTileKernels* kernels;
  bool (*takes)(const MatrixView& w, int64_t n_tokens, Numerics numerics);
  MatmulSharedInputFn alone;
};
void grouped_row_tiles(const GroupedPass& pass, const GroupedMatmul& g, ThreadPool& pool, Numerics numerics);

}  // namespace kairo::kernels::cpu

namespace kairo::kernels::avx512 {
// The AVX-512 (VNNI) row-tile kernels, also the AMX backend's for few tokens.
const cpu::RowTileKernels& row_tile_kernels();
}  // namespace kairo::kernels::avx512

namespace kairo::kernels::avx2 {
// The AVX2 row-tile kernels (the same integer dots and float steps, so the same bits as AVX-512's): the AVX-VNNI ones
// where cpu::avx2_uses_vnni(), else the plain ones (vpmaddubsw), which every AVX2 CPU runs.
const cpu::RowTileKernels& row_tile_kernels();
const cpu::RowTileKernels& plain_row_tile_kernels();
}  // namespace kairo::kernels::avx2

namespace kairo::kernels::avxvnni {
// The AVX2 row-tile kernels with vpdpbusd on ymm: only on CPUs with AVX-VNNI (cpu_features().avx_vnni).
const cpu::RowTileKernels& row_tile_kernels();
}  // namespace kairo::kernels::avxvnni

namespace kairo::kernels::neon {
// The NEON row-tile kernels (the same integer dots and float steps as the x86 ones, so the same bits): the SMMLA ones
// where cpu::neon_uses_i8mm(), else the SDOT ones where cpu::neon_uses_dot(), else the plain ones (SMULL/SMLAL),
// which every aarch64 CPU runs.
const cpu::RowTileKernels& row_tile_kernels();
const cpu::RowTileKernels& plain_row_tile_kernels();
}  // namespace kairo::kernels::neon

namespace kairo::kernels::neondot {
// The NEON row-tile kernels with SDOT: only on CPUs with the dot-product extension (cpu_features().neon_dot).
const cpu::RowTileKernels& row_tile_kernels();
}  // namespace kairo::kernels::neondot

namespace kairo::kernels::neoni8mm {
// SDOT for one token, SMMLA for pairs: only on CPUs with the int8 matrix-multiply extension (cpu_features().neon_i8mm).
const cpu::RowTileKernels& row_tile_kernels();
}  // namespace kairo::kernels::neoni8mm
