// The NEON row-tile kernels with SDOT (the Armv8.2 dot-product extension: Graviton 2 and later, Ampere Altra,
// Apple M1 and later). Called only where cpu_features().neon_dot holds.
#define KAIRO_ROW_TILES_NS kairo::kernels::neondot
#define KAIRO_ROW_TILES_DOT 1
#define KAIRO_ROW_TILES_I8MM 0
#define KAIRO_ROW_TILES_GETTER row_tile_kernels
#include "kernels/cpu/row_tiles_neon.inc"
