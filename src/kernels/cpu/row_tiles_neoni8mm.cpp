// The NEON row-tile kernels with the int8 matrix-multiply extension (Armv8.6 I8MM: Graviton 3 and 4, Neoverse
// V1/V2/N2, Apple M2 and later): SMMLA for pairs of tokens, SDOT for one. Called only where cpu_features().neon_i8mm
// holds.
#define KAIRO_ROW_TILES_NS kairo::kernels::neoni8mm
#define KAIRO_ROW_TILES_DOT 1
#define KAIRO_ROW_TILES_I8MM 1
#define KAIRO_ROW_TILES_GETTER row_tile_kernels
#include "kernels/cpu/row_tiles_neon.inc"
