#include "tensor/dequant.h"

#include <cassert>
#include <cstring>

#include "core/half.h"

namespace kairo {
namespace {

// Copies block i out of a byte buffer: the source may be unaligned (a raw file buffer) and this keeps the reference
// free of aliasing and alignment assumptions. Cost is irrelevant for the oracle.
template <typename Block>
Block load_block(const void* src, int64_t i) {
  Block b;
  std::memcpy(&b, static_cast<const uint8_t*>(src) + i * static_cast<int64_t>(sizeof(Block)), sizeof(Block));
  return b;
}

template <typename Block>
void dequantize_typed(const void* src, float* dst, int64_t n) {
  constexpr int kN = BlockTraits<Block>::n;
  assert(n % kN == 0);
  const int64_t n_blocks = n / kN;
  for (int64_t i = 0; i < n_blocks; ++i) {
    const Block b = load_block<Block>(src, i);
    dequantize_blocks(&b, dst + i * kN, 1);
  }
}

void dequantize_f32(const void* src, float* dst, int64_t n) {
  std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));
}

void dequantize_f16(const void* src, float* dst, int64_t n) {
  const auto* p = static_cast<const uint8_t*>(src);
  for (int64_t i = 0; i < n; ++i) {
    uint16_t h;
    std::memcpy(&h, p + 2 * i, 2);
    dst[i] = f16_to_f32(h);
  }
}

void dequantize_bf16(const void* src, float* dst, int64_t n) {
  const auto* p = static_cast<const uint8_t*>(src);
  for (int64_t i = 0; i < n; ++i) {
    uint16_t h;
    std::memcpy(&h, p + 2 * i, 2);
    dst[i] = bf16_to_f32(h);
  }
}

}  // namespace

void dequantize_row(DType type, const void* src, float* dst, int64_t n) {
  switch (type) {
    case DType::F32: return dequantize_f32(src, dst, n);
    case DType::F16: return dequantize_f16(src, dst, n);
    case DType::BF16: return dequantize_bf16(src, dst, n);
    case DType::Q4_0: return dequantize_typed<BlockQ4_0>(src, dst, n);
    case DType::Q4_1: return dequantize_typed<BlockQ4_1>(src, dst, n);
    case DType::Q5_0: return dequantize_typed<BlockQ5_0>(src, dst, n);
    case DType::Q5_1: return dequantize_typed<BlockQ5_1>(src, dst, n);
    case DType::Q8_0: return dequantize_typed<BlockQ8_0>(src, dst, n);
    case DType::MXFP4: return dequantize_typed<BlockMXFP4>(src, dst, n);
    case DType::Q4_K: return dequantize_typed<BlockQ4_K>(src, dst, n);
    case DType::Q5_K: return dequantize_typed<BlockQ5_K>(src, dst, n);
    case DType::Q6_K: return dequantize_typed<BlockQ6_K>(src, dst, n);
    default: break;
  }
  assert(false && "dequantize_row: unsupported type (callers check dtype_info(type).supported)");
}

}  // namespace kairo
