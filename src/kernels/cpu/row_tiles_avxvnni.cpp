// The AVX2 row-tile kernels with AVX-VNNI: vpdpbusd on ymm (Intel Alder Lake and later client cores, which lack
// AVX-512). Called only where cpu_features().avx_vnni holds.
#include <immintrin.h>

#define KAIRO_ROW_TILES_NS kairo::kernels::avxvnni
#define KAIRO_ROW_TILES_VNNI 1
#define KAIRO_ROW_TILES_GETTER row_tile_kernels
#define KAIRO_DPBUSD _mm256_dpbusd_avx_epi32
#include "kernels/cpu/row_tiles_avx2.inc"
