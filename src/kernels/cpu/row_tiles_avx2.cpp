// The AVX2 row-tile kernels every AVX2 CPU runs (vpmaddubsw), and the AVX2 backend's choice between them and the
// AVX-VNNI ones (row_tiles_avxvnni.cpp).
#define KAIRO_ROW_TILES_NS kairo::kernels::avx2
#define KAIRO_ROW_TILES_VNNI 0
#define KAIRO_ROW_TILES_GETTER plain_row_tile_kernels
#include "kernels/cpu/row_tiles_avx2.inc"

#include "kernels/cpu/cpu_features.h"

namespace kairo::kernels::avx2 {

const cpu::RowTileKernels& row_tile_kernels() {
  static const cpu::RowTileKernels& kernels = cpu::avx2_uses_vnni() ? avxvnni::row_tile_kernels() : plain_row_tile_kernels();
  return kernels;
}

}  // namespace kairo::kernels::avx2
