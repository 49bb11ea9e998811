// Load-time repacking of Q4_K / Q6_K weights into row tiles (see Packing in quant_matmul.h). Plain C++: it runs
// once per weight.
#include <cstring>

#include "core/bulk_memory.h"
#include "kernels/cpu/quant_matmul.h"
#include "tensor/blocks.h"

namespace kairo::kernels::avx512 {
namespace {

// Super-block `blk` of one row into slot r of a tile's super-block area `out`.
void pack_q4_k(const BlockQ4_K& blk, int r, uint8_t* out) {
  for (int j = 0; j < 8; ++j) {  // sub-block j: values 32j .. 32j + 31
    const uint8_t* qs = blk.qs + 32 * (j / 2);
    auto value = [&](int e) { return static_cast<uint8_t>(j % 2 == 0 ? qs[e] & 0x0F : qs[e] >> 4); };
    uint8_t* v = out + 256 * j;
    for (int s = 0; s < 4; ++s)
      for (int i = 0; i < 4; ++i)
        v[64 * s + 4 * r + i] = static_cast<uint8_t>(value(8 * s + i) | (value(8 * s + 4 + i) << 4));
    uint8_t sc = 0, m = 0;
    unpack_scale_min_k4(j, blk.scales, &sc, &m);
    out[2112 + 16 * j + r] = sc;
    out[2240 + 16 * j + r] = m;
  }
  std::memcpy(out + 2048 + 2 * r, &blk.d, 2);
  std::memcpy(out + 2080 + 2 * r, &blk.dmin, 2);
}

// Value l (0..255) of a Q6_K super-block as stored (0..63; the zero point is 32).
uint8_t q6_k_value(const BlockQ6_K& blk, int l) {
  const int h = l / 128, k = l % 128, q = k / 32, e = k % 32;
  const uint8_t ql = blk.ql[64 * h + e + 32 * (q % 2)];
  const uint8_t nib = q < 2 ? ql & 0x0F : ql >> 4;
  const uint8_t hi = (blk.qh[32 * h + e] >> (2 * q)) & 3;
  return static_cast<uint8_t>(nib | (hi << 4));
}

void pack_q6_k(const BlockQ6_K& blk, int r, uint8_t* out) {
  for (int j = 0; j < 16; ++j) {  // sub-block j: values 16j .. 16j + 15
    uint8_t* v = out + 192 * j;
    for (int t = 0; t < 2; ++t)
      for (int i = 0; i < 4; ++i)
        v[64 * t + 4 * r + i] = static_cast<uint8_t>((q6_k_value(blk, 16 * j + 8 * t + i) & 0x0F) |
                                                     ((q6_k_value(blk, 16 * j + 8 * t + 4 + i) & 0x0F) << 4));
    for (int i = 0; i < 4; ++i) {
      uint8_t bits = 0;
      for (int k = 0; k < 4; ++k) bits = static_cast<uint8_t>(bits | ((q6_k_value(blk, 16 * j + 4 * k + i) >> 4) << (2 * k)));
      v[128 + 4 * r + i] = bits;
    }
    out[3104 + 16 * j + r] = static_cast<uint8_t>(blk.scales[j]);
  }
  std::memcpy(out + 3072 + 2 * r, &blk.d, 2);
}

}  // namespace

PackedMatrix pack_kquant_row_tiles(const MatrixView& w) {
  PackedMatrix out;
  if (w.packing != kPackNone || w.n_cols % 256 != 0 || (w.dtype != DType::Q4_K && w.dtype != DType::Q6_K)) return out;
  const bool q4 = w.dtype == DType::Q4_K;
  const int64_t n_super = w.n_cols / 256;
  const int64_t super_bytes = q4 ? kPackQ4_KSuperBytes : kPackQ6_KSuperBytes;
  const int64_t tile_bytes = n_super * super_bytes;
  const int64_t n_tiles = (w.n_rows + kPackTileRows - 1) / kPackTileRows;
  out.storage = allocate_bulk(static_cast<size_t>(n_tiles * tile_bytes));
  auto* dst = static_cast<uint8_t*>(out.storage.get());
  // Padding rows: all zero, i.e. zero scales (and for Q4_K zero mins).
  std::memset(dst, 0, static_cast<size_t>(n_tiles * tile_bytes));
  const auto* src = static_cast<const uint8_t*>(w.data);
  for (int64_t r = 0; r < w.n_rows; ++r) {
    uint8_t* tile = dst + (r / kPackTileRows) * tile_bytes;
    const int slot = static_cast<int>(r % kPackTileRows);
    for (int64_t sb = 0; sb < n_super; ++sb) {
      const uint8_t* p = src + r * static_cast<int64_t>(w.row_bytes);
      if (q4) {
        BlockQ4_K blk;
        std::memcpy(&blk, p + sb * static_cast<int64_t>(sizeof(BlockQ4_K)), sizeof(blk));
        pack_q4_k(blk, slot, tile + sb * super_bytes);
      } else {
        BlockQ6_K blk;
        std::memcpy(&blk, p + sb * static_cast<int64_t>(sizeof(BlockQ6_K)), sizeof(blk));
        pack_q6_k(blk, slot, tile + sb * super_bytes);
      }
    }
  }
  out.view = w;
  out.view.data = dst;
  out.view.row_bytes = static_cast<size_t>(tile_bytes / kPackTileRows);
  out.view.packing = q4 ? kPackQ4_KRows16 : kPackQ6_KRows16;
  return out;
}

}  // namespace kairo::kernels::avx512
