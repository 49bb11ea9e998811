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

// Tile loads and stores that tell the compiler exactly which bytes they read or write. GCC's _tile_loadd names no
// memory at all (stores that fill the operand could legally sink below it) and its _tile_stored clobbers all of
// memory (every array the caller keeps, the kernels' float accumulators included, is spilled around it). Tile ids
// must be literals (they are pasted into the assembly); `bytes` is rows x stride of the operand's footprint.
namespace kairo::kernels::amx::detail {
template <int kBytes>
struct Footprint {
  char bytes[kBytes];
};
}  // namespace kairo::kernels::amx::detail

#define KAIRO_TILE_LOAD(tmm, ptr, stride, bytes)                                                           \
  __asm__ volatile("tileloadd (%0,%1,1), %%tmm" #tmm                                                       \
                   :                                                                                      \
                   : "r"(ptr), "r"(static_cast<long>(stride)),                                            \
                     "m"(*reinterpret_cast<const ::kairo::kernels::amx::detail::Footprint<bytes>*>(ptr)))

#define KAIRO_TILE_STORE(tmm, ptr, stride, bytes)                                                          \
  __asm__ volatile("tilestored %%tmm" #tmm ", (%1,%2,1)"                                                   \
                   : "=m"(*reinterpret_cast<::kairo::kernels::amx::detail::Footprint<bytes>*>(ptr))        \
                   : "r"(ptr), "r"(static_cast<long>(stride)))
