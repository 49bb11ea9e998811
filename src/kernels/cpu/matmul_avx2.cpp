// Matmul driver for the AVX2 backend: row-tile-packed weights (Q4_0, Q8_0, MXFP4, Q4_K, Q6_K) go through the
// row-tile driver with the AVX2 kernels (row_tiles_avx2.cpp); every other weight through the float path, which
// dequantizes rows with the reference.
#include "kernels/cpu/isa_kernels.h"
#include "kernels/cpu/quant_matmul.h"
#include "kernels/cpu/row_tile_matmul.h"

namespace kairo::kernels::avx2 {
namespace {

// Tokens quantized and multiplied per pass over the weights: the multi-token kernel takes them 4 at a time while
// the tile stays in cache, so more per chunk means fewer reads of the weights.
constexpr int64_t kChunkTokens = avx512::kMaxRowTileTokens;

}  // namespace

void matmul(const MatrixView& w, const float* x, float* y, int64_t n_tokens, ThreadPool& pool) {
  if (n_tokens <= 0 || w.n_rows <= 0) return;
  if (cpu::row_tiles_eligible(&w, 1))
    return cpu::row_tiles_matmul(row_tile_kernels(), cpu::RowTileSet{&w, &y, 1}, x, n_tokens, kChunkTokens, pool);
  matmul_float(w, x, y, n_tokens, pool);
}

void matmul_shared_input(const MatrixView* ws, int n_mats, const float* x, float* const* ys, int64_t n_tokens,
                         ThreadPool& pool) {
  if (n_tokens > 0 && cpu::row_tiles_eligible(ws, n_mats))
    return cpu::row_tiles_matmul(row_tile_kernels(), cpu::RowTileSet{ws, ys, n_mats}, x, n_tokens, kChunkTokens, pool);
  for (int i = 0; i < n_mats; ++i) matmul(ws[i], x, ys[i], n_tokens, pool);
}

void matmul_grouped(const GroupedMatmul& g, ThreadPool& pool, Numerics numerics) {
  const cpu::GroupedPass pass{&row_tile_kernels(), nullptr, matmul_shared_input};
  cpu::grouped_row_tiles(pass, g, pool, numerics);
}

}  // namespace kairo::kernels::avx2
