// Load-time repacking of legacy-quant and MXFP4 weights into row tiles (see Packing in quant_matmul.h); every other weight is
// copied as it is. Either way the result lives in bulk (huge-page) memory, which decode streams faster than the
// file's 4 KiB page-cache pages. Plain C++: it runs once per weight.
#include <cstring>

#include "core/bulk_memory.h"
#include "kernels/cpu/quant_matmul.h"
#include "tensor/blocks.h"

namespace kairo::kernels::avx512 {
namespace {

// Value e (0..31) of a Q4_0 block, stored unsigned (q + 8).
uint8_t q4_0_value(const BlockQ4_0& blk, int e) {
  return static_cast<uint8_t>(e < 16 ? blk.qs[e] & 0x0F : blk.qs[e - 16] >> 4);
}

// Block b of GGUF row `src` into slot r of a tile: values at `values` (the block's 16-row value area), f16 scale at
// `scales` (the block's 16 scales).
void pack_q4_0_block(const uint8_t* src, int r, uint8_t* values, uint8_t* scales) {
  BlockQ4_0 blk;
  std::memcpy(&blk, src, sizeof(blk));
  std::memcpy(scales + 2 * r, &blk.d, 2);
  for (int s = 0; s < 4; ++s)
    for (int i = 0; i < 4; ++i)
      values[64 * s + 4 * r + i] =
          static_cast<uint8_t>(q4_0_value(blk, 8 * s + i) | (q4_0_value(blk, 8 * s + 4 + i) << 4));
}

// MXFP4: the codes in the Q4_0 tile order (raw, no zero point), the E8M0 byte at `scales` (16 per block).
void pack_mxfp4_block(const uint8_t* src, int r, uint8_t* values, uint8_t* scales) {
  BlockMXFP4 blk;
  std::memcpy(&blk, src, sizeof(blk));
  scales[r] = blk.e;
  auto code = [&](int e) { return static_cast<uint8_t>(e < 16 ? blk.qs[e] & 0x0F : blk.qs[e - 16] >> 4); };
  for (int s = 0; s < 4; ++s)
    for (int i = 0; i < 4; ++i)
      values[64 * s + 4 * r + i] = static_cast<uint8_t>(code(8 * s + i) | (code(8 * s + 4 + i) << 4));
}

void pack_q8_0_block(const uint8_t* src, int r, uint8_t* values, uint8_t* scales) {
  std::memcpy(scales + 2 * r, src, 2);
  for (int e = 0; e < 32; ++e) values[64 * (e / 4) + 4 * r + e % 4] = static_cast<uint8_t>(src[2 + e] ^ 0x80);
}

}  // namespace

PackedMatrix pack_weights(const MatrixView& w) {
  PackedMatrix out;
  if (w.packing != kPackNone) return out;
  out = pack_kquant_row_tiles(w);
  if (out.view.data != nullptr) return out;
  if (w.n_cols % 32 != 0 || (w.dtype != DType::Q4_0 && w.dtype != DType::Q8_0 && w.dtype != DType::MXFP4)) {  // no better layout: a copy
    const size_t bytes = w.row_bytes * static_cast<size_t>(w.n_rows);
    out.storage = allocate_bulk(bytes);
    std::memcpy(out.storage.get(), w.data, bytes);
    out.view = w;
    out.view.data = out.storage.get();
    return out;
  }
  const bool q4 = w.dtype == DType::Q4_0, mxfp4 = w.dtype == DType::MXFP4;
  const uint32_t packing = q4 ? kPackQ4_0Rows16 : mxfp4 ? kPackMXFP4Rows16 : kPackQ8_0Rows16;
  const int64_t n_blocks = w.n_cols / 32;
  const int64_t value_bytes = q4 || mxfp4 ? 256 : 512;
  const int64_t scale_bytes = mxfp4 ? 16 : 32;  // per block: 16 E8M0 bytes or 16 f16 scales
  const int64_t block_bytes = static_cast<int64_t>(dtype_info(w.dtype).block_bytes);
  const int64_t n_tiles = (w.n_rows + kPackTileRows - 1) / kPackTileRows;
  const int64_t tile_bytes = kPackTileRows * static_cast<int64_t>(w.row_bytes);
  out.storage = allocate_bulk(static_cast<size_t>(n_tiles * tile_bytes));
  auto* dst = static_cast<uint8_t*>(out.storage.get());
  // Padding rows: value 0 (stored as the zero point; MXFP4's code 0 is the value 0), scale 0 (MXFP4: 2^-128).
  for (int64_t t = 0; t < n_tiles; ++t) {
    uint8_t* tile = dst + t * tile_bytes;
    std::memset(tile, q4 ? 0x88 : mxfp4 ? 0x00 : 0x80, static_cast<size_t>(n_blocks * value_bytes));
    std::memset(tile + n_blocks * value_bytes, 0, static_cast<size_t>(n_blocks * scale_bytes));
  }
  const auto* src = static_cast<const uint8_t*>(w.data);
  for (int64_t r = 0; r < w.n_rows; ++r) {
    uint8_t* tile = dst + (r / kPackTileRows) * tile_bytes;
    const int slot = static_cast<int>(r % kPackTileRows);
    for (int64_t b = 0; b < n_blocks; ++b) {
      const uint8_t* blk = src + r * static_cast<int64_t>(w.row_bytes) + b * block_bytes;
      uint8_t* values = tile + b * value_bytes;
      uint8_t* scales = tile + n_blocks * value_bytes + scale_bytes * b;
      if (q4) pack_q4_0_block(blk, slot, values, scales);
      else if (mxfp4) pack_mxfp4_block(blk, slot, values, scales);
      else pack_q8_0_block(blk, slot, values, scales);
    }
  }
  out.view = w;
  out.view.data = dst;
  out.view.packing = packing;
  return out;
}

}  // namespace kairo::kernels::avx512
