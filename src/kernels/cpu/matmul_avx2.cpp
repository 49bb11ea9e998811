// Matmul driver for the AVX2 backend: the row-tile driver with this ISA's kernels (row_tile_backend.inc).
#include "kernels/cpu/isa_kernels.h"
#include "kernels/cpu/quant_matmul.h"
#include "kernels/cpu/row_tile_matmul.h"

namespace kairo::kernels::avx2 {
#include "kernels/cpu/row_tile_backend.inc"
}  // namespace kairo::kernels::avx2
