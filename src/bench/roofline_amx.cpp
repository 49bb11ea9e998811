// AMX tile loops for the roofline benchmark. Linux hands out the (8 KiB) tile-data state only to processes that ask
// with arch_prctl(ARCH_REQ_XCOMP_PERM); kernels::cpu::cpu_features() does that once, and each thread loads its own
// tile configuration.
#include <cpuid.h>
#include <immintrin.h>

#include <cstring>

#include "bench/roofline_kernels.h"
#include "kernels/cpu/cpu_features.h"

namespace kairo::bench::roofline_kernels {
namespace {

struct alignas(64) TileConfig {
  uint8_t palette_id;
  uint8_t start_row;
  uint8_t reserved[14];
  uint16_t colsb[16];
  uint8_t rows[16];
};

// tmm0..3: accumulators (16 rows × 64 bytes), tmm4,5: A (16 × 64 bytes), tmm6,7: B (16 × 64 bytes).
void configure_tiles() {
  TileConfig cfg;
  std::memset(&cfg, 0, sizeof(cfg));
  cfg.palette_id = 1;
  for (int t = 0; t < 8; ++t) {
    cfg.colsb[t] = 64;
    cfg.rows[t] = 16;
  }
  // Not _tile_loadconfig: GCC 12 treats the stores filling cfg as dead and drops them.
  __asm__ volatile("ldtilecfg %0" : : "m"(cfg) : "memory");
}

}  // namespace

bool amx_available() { return kernels::cpu::cpu_features().amx; }

bool amx_bf16_available() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return false;
  return amx_available() && (d & (1u << 22)) != 0;
}

int64_t amx_int8_dot(int64_t iters, int8_t a, int8_t b) {
  configure_tiles();
  alignas(64) int8_t ta[16 * 64], tb[16 * 64];
  alignas(64) int32_t c[16 * 16];
  std::memset(ta, a, sizeof(ta));
  std::memset(tb, b, sizeof(tb));
  std::memset(c, 0, sizeof(c));
  _tile_loadd(0, c, 64);
  _tile_loadd(1, c, 64);
  _tile_loadd(2, c, 64);
  _tile_loadd(3, c, 64);
  _tile_loadd(4, ta, 64);
  _tile_loadd(5, ta, 64);
  _tile_loadd(6, tb, 64);
  _tile_loadd(7, tb, 64);
  // Four accumulators from two A and two B tiles: the 2×2 blocking a real AMX matmul uses.
  for (int64_t i = 0; i < iters; ++i) {
    _tile_dpbssd(0, 4, 6);
    _tile_dpbssd(1, 4, 7);
    _tile_dpbssd(2, 5, 6);
    _tile_dpbssd(3, 5, 7);
  }
  _tile_stored(0, c, 64);
  _tile_release();
  return c[0];
}

float amx_bf16_dot(int64_t iters) {
  configure_tiles();
  alignas(64) uint16_t ta[16 * 32];
  alignas(64) float c[16 * 16];
  for (auto& x : ta) x = 0x3F80;  // bf16 1.0
  std::memset(c, 0, sizeof(c));
  _tile_loadd(0, c, 64);
  _tile_loadd(1, c, 64);
  _tile_loadd(2, c, 64);
  _tile_loadd(3, c, 64);
  _tile_loadd(4, ta, 64);
  _tile_loadd(5, ta, 64);
  _tile_loadd(6, ta, 64);
  _tile_loadd(7, ta, 64);
  for (int64_t i = 0; i < iters; ++i) {
    _tile_dpbf16ps(0, 4, 6);
    _tile_dpbf16ps(1, 4, 7);
    _tile_dpbf16ps(2, 5, 6);
    _tile_dpbf16ps(3, 5, 7);
  }
  _tile_stored(0, c, 64);
  _tile_release();
  return c[0];
}

}  // namespace kairo::bench::roofline_kernels
