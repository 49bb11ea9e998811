#include "tensor/quantize.h"

#include <cassert>
#include <cstring>

#include "core/half.h"

namespace kairo {
namespace {

// Quantizes block by block into a local struct and copies it out, so `dst` may be any byte buffer (unaligned).
template <typename Block>
void quantize_typed(const float* src, void* dst, int64_t n) {
  constexpr int kN = BlockTraits<Block>::n;
  assert(n % kN == 0);
  auto* out = static_cast<uint8_t*>(dst);
  for (int64_t i = 0; i < n / kN; ++i) {
    Block b;
    quantize_blocks(src + i * kN, &b, 1);
    std::memcpy(out + i * static_cast<int64_t>(sizeof(Block)), &b, sizeof(Block));
  }
}

template <uint16_t (*Convert)(float)>
void quantize_half(const float* src, void* dst, int64_t n) {
  auto* out = static_cast<uint8_t*>(dst);
  for (int64_t i = 0; i < n; ++i) {
    const uint16_t h = Convert(src[i]);
    std::memcpy(out + 2 * i, &h, 2);
  }
}

}  // namespace

bool can_quantize_to(DType type) {
  switch (type) {
    case DType::F32:
    case DType::F16:
    case DType::BF16:
    case DType::Q4_0:
    case DType::Q4_1:
    case DType::Q5_0:
    case DType::Q5_1:
    case DType::Q8_0:
    case DType::MXFP4:
    case DType::Q4_K:
    case DType::Q5_K:
    case DType::Q6_K:
      return true;
    default:
      return false;
  }
}

void quantize_row(DType type, const float* src, void* dst, int64_t n) {
  switch (type) {
    case DType::F32: std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float)); return;
    case DType::F16: return quantize_half<f32_to_f16>(src, dst, n);
    case DType::BF16: return quantize_half<f32_to_bf16>(src, dst, n);
    case DType::Q4_0: return quantize_typed<BlockQ4_0>(src, dst, n);
    case DType::Q4_1: return quantize_typed<BlockQ4_1>(src, dst, n);
    case DType::Q5_0: return quantize_typed<BlockQ5_0>(src, dst, n);
    case DType::Q5_1: return quantize_typed<BlockQ5_1>(src, dst, n);
    case DType::Q8_0: return quantize_typed<BlockQ8_0>(src, dst, n);
    case DType::MXFP4: return quantize_typed<BlockMXFP4>(src, dst, n);
    case DType::Q4_K: return quantize_typed<BlockQ4_K>(src, dst, n);
    case DType::Q5_K: return quantize_typed<BlockQ5_K>(src, dst, n);
    case DType::Q6_K: return quantize_typed<BlockQ6_K>(src, dst, n);
    default: break;
  }
  assert(false && "quantize_row: unsupported type (callers check can_quantize_to)");
}

}  // namespace kairo
