// Backend::matmul_grouped for the AVX-512 and AMX backends: the row-tile grouped pass (grouped_row_tiles.cpp) with
// this ISA's kernels, and the groups it cannot take sent to the backend's own matmul.
#include "kernels/cpu/isa_kernels.h"
#include "kernels/cpu/quant_matmul.h"
#include "kernels/cpu/row_tile_matmul.h"

namespace kairo::kernels::avx512 {
namespace {

// Without AMX the row-tile kernels are the path for any token count.
bool avx512_takes(const MatrixView&, int64_t, Numerics) { return true; }

// With AMX they are the path for few tokens, and for MXFP4 (no AMX path); past their limit, AMX machines multiply
// tiles instead (and under relaxed numerics, past kMinRelaxedTokens, in bf16).
bool amx_takes(const MatrixView& w, int64_t n_tokens, Numerics numerics) {
  if (!has_tile_gemm(w.packing)) return true;
  return n_tokens <= max_row_tile_tokens(w.packing) && (numerics == Numerics::Exact || n_tokens < kMinRelaxedTokens);
}

}  // namespace

void matmul_grouped(const GroupedMatmul& g, ThreadPool& pool, Numerics numerics) {
  const cpu::GroupedPass pass{&row_tile_kernels(), avx512_takes, matmul_shared_input};
  cpu::grouped_row_tiles(pass, g, pool, numerics);
}

}  // namespace kairo::kernels::avx512

namespace kairo::kernels::amx {

void matmul_grouped(const GroupedMatmul& g, ThreadPool& pool, Numerics numerics) {
  const cpu::GroupedPass pass{&avx512::row_tile_kernels(), avx512::amx_takes,
                              numerics == Numerics::Relaxed ? matmul_relaxed : matmul_shared_input};
  cpu::grouped_row_tiles(pass, g, pool, numerics);
}

}  // namespace kairo::kernels::amx
