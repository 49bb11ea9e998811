// The NEON row-tile kernels every aarch64 CPU runs (SMULL/SMLAL), and the NEON backend's choice between them, the
// SDOT ones (row_tiles_neondot.cpp) and the SMMLA ones (row_tiles_neoni8mm.cpp).
#define KAIRO_ROW_TILES_NS kairo::kernels::neon
#define KAIRO_ROW_TILES_DOT 0
#define KAIRO_ROW_TILES_I8MM 0
#define KAIRO_ROW_TILES_GETTER plain_row_tile_kernels
#include "kernels/cpu/row_tiles_neon.inc"

#include "kernels/cpu/cpu_features.h"

namespace kairo::kernels::neon {

const cpu::RowTileKernels& row_tile_kernels() {
  static const cpu::RowTileKernels& kernels = cpu::neon_uses_i8mm() ? neoni8mm::row_tile_kernels()
                                              : cpu::neon_uses_dot() ? neondot::row_tile_kernels()
                                                                     : plain_row_tile_kernels();
  return kernels;
}

}  // namespace kairo::kernels::neon
