#pragma once
// The AMX tile configuration (palette 1): rows and bytes per row of each of the 8 tile registers. A thread loads
// one before its tile instructions and releases the tiles after (the kernels that use AMX do both).
#include <cstdint>

namespace kairo::kernels::amx {

struct alignas(64) TileConfig {
  uint8_t palette = 1;
  uint8_t start_row = 0;
  uint8_t reserved[14] = {};
  uint16_t colsb[16] = {};
  uint8_t rows[16] = {};
};
static_assert(sizeof(TileConfig) == 64);

inline void load_tile_config(const TileConfig& cfg) {
  // Not _tile_loadconfig: GCC 12 drops the stores that fill cfg before its ldtilecfg (they look dead to it).
  __asm__ volatile("ldtilecfg %0" : : "m"(cfg) : "memory");
}

}  // namespace kairo::kernels::amx
