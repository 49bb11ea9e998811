// Load-time repacking of legacy-quant weights into 16-block groups (see Packing in quant_matmul.h). Plain C++:
// it runs once per weight.
#include <cstdlib>
#include <cstring>
#include <new>

#include "kernels/cpu/quant_matmul.h"
#include "tensor/blocks.h"

namespace kairo::kernels::avx512 {
namespace {

// Value e (0..31) of a Q4_0 block, stored unsigned (q + 8).
uint8_t q4_0_value(const BlockQ4_0& blk, int e) {
  return static_cast<uint8_t>(e < 16 ? blk.qs[e] & 0x0F : blk.qs[e - 16] >> 4);
}

void pack_q4_0_row(const uint8_t* src, int64_t n_blocks, uint8_t* dst) {
  const int64_t n_groups = (n_blocks + 15) / 16;
  std::memset(dst, 0, static_cast<size_t>(n_groups * kPackQ4_0GroupBytes));
  for (int64_t b = 0; b < n_blocks; ++b) {
    BlockQ4_0 blk;
    std::memcpy(&blk, src + b * sizeof(BlockQ4_0), sizeof(blk));
    uint8_t* group = dst + (b / 16) * kPackQ4_0GroupBytes;
    const int j = static_cast<int>(b % 16);
    std::memcpy(group + 256 + 2 * j, &blk.d, 2);
    for (int s = 0; s < 4; ++s)
      for (int i = 0; i < 4; ++i)
        group[64 * s + 4 * j + i] =
            static_cast<uint8_t>(q4_0_value(blk, 8 * s + i) | (q4_0_value(blk, 8 * s + 4 + i) << 4));
  }
}

void pack_q8_0_row(const uint8_t* src, int64_t n_blocks, uint8_t* dst) {
  const int64_t n_groups = (n_blocks + 15) / 16;
  for (int64_t g = 0; g < n_groups; ++g) {
    std::memset(dst + g * kPackQ8_0GroupBytes, 0x80, 512);  // padding blocks: q = 0
    std::memset(dst + g * kPackQ8_0GroupBytes + 512, 0, 32);
  }
  for (int64_t b = 0; b < n_blocks; ++b) {
    const uint8_t* blk = src + b * sizeof(BlockQ8_0);
    uint8_t* group = dst + (b / 16) * kPackQ8_0GroupBytes;
    const int j = static_cast<int>(b % 16);
    std::memcpy(group + 512 + 2 * j, blk, 2);
    for (int e = 0; e < 32; ++e) group[64 * (e / 4) + 4 * j + e % 4] = static_cast<uint8_t>(blk[2 + e] ^ 0x80);
  }
}

}  // namespace

PackedMatrix pack_weights(const MatrixView& w) {
  PackedMatrix out;
  if (w.packing != kPackNone || w.n_cols % 32 != 0 || (w.dtype != DType::Q4_0 && w.dtype != DType::Q8_0))
    return out;
  const bool q4 = w.dtype == DType::Q4_0;
  const int64_t n_blocks = w.n_cols / 32;
  const size_t row_bytes =
      static_cast<size_t>((n_blocks + 15) / 16) * (q4 ? kPackQ4_0GroupBytes : kPackQ8_0GroupBytes);
  const size_t total = (row_bytes * static_cast<size_t>(w.n_rows) + 63) / 64 * 64;
  void* mem = std::aligned_alloc(64, total);
  if (mem == nullptr) throw std::bad_alloc();
  out.storage = std::shared_ptr<void>(mem, std::free);
  auto* dst = static_cast<uint8_t*>(mem);
  const auto* src = static_cast<const uint8_t*>(w.data);
  for (int64_t r = 0; r < w.n_rows; ++r) {
    if (q4) pack_q4_0_row(src + r * w.row_bytes, n_blocks, dst + r * row_bytes);
    else pack_q8_0_row(src + r * w.row_bytes, n_blocks, dst + r * row_bytes);
  }
  out.view = w;
  out.view.data = mem;
  out.view.row_bytes = row_bytes;
  out.view.packing = q4 ? kPackQ4_0x16 : kPackQ8_0x16;
  return out;
}

}  // namespace kairo::kernels::avx512
