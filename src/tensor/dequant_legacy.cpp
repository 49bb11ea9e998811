// Reference dequantization of the 32-element block types. Every expression mirrors ggml's dequantize_row_q*_0/1:
// integer quant converted to float, times d, plus m -- in that order -- so results are bit-identical.
#include <cstring>

#include "core/half.h"
#include "tensor/dequant.h"

namespace kairo {

void dequantize_blocks(const BlockQ4_0* src, float* dst, int64_t n_blocks) {
  for (int64_t i = 0; i < n_blocks; ++i, dst += kQK) {
    const BlockQ4_0& b = src[i];
    const float d = f16_to_f32(b.d);
    for (int j = 0; j < kQK / 2; ++j) {
      const int x0 = (b.qs[j] & 0x0F) - 8;
      const int x1 = (b.qs[j] >> 4) - 8;
      dst[j] = static_cast<float>(x0) * d;
      dst[j + kQK / 2] = static_cast<float>(x1) * d;
    }
  }
}

void dequantize_blocks(const BlockQ4_1* src, float* dst, int64_t n_blocks) {
  for (int64_t i = 0; i < n_blocks; ++i, dst += kQK) {
    const BlockQ4_1& b = src[i];
    const float d = f16_to_f32(b.d);
    const float m = f16_to_f32(b.m);
    for (int j = 0; j < kQK / 2; ++j) {
      const int x0 = b.qs[j] & 0x0F;
      const int x1 = b.qs[j] >> 4;
      dst[j] = static_cast<float>(x0) * d + m;
      dst[j + kQK / 2] = static_cast<float>(x1) * d + m;
    }
  }
}

namespace {
uint32_t load_qh(const uint8_t qh[4]) {
  uint32_t v;
  std::memcpy(&v, qh, 4);  // little-endian, as in the file
  return v;
}
}  // namespace

void dequantize_blocks(const BlockQ5_0* src, float* dst, int64_t n_blocks) {
  for (int64_t i = 0; i < n_blocks; ++i, dst += kQK) {
    const BlockQ5_0& b = src[i];
    const float d = f16_to_f32(b.d);
    const uint32_t qh = load_qh(b.qh);
    for (int j = 0; j < kQK / 2; ++j) {
      const int h0 = static_cast<int>((qh >> j) & 1u) << 4;
      const int h1 = static_cast<int>((qh >> (j + kQK / 2)) & 1u) << 4;
      const int x0 = ((b.qs[j] & 0x0F) | h0) - 16;
      const int x1 = ((b.qs[j] >> 4) | h1) - 16;
      dst[j] = static_cast<float>(x0) * d;
      dst[j + kQK / 2] = static_cast<float>(x1) * d;
    }
  }
}

void dequantize_blocks(const BlockQ5_1* src, float* dst, int64_t n_blocks) {
  for (int64_t i = 0; i < n_blocks; ++i, dst += kQK) {
    const BlockQ5_1& b = src[i];
    const float d = f16_to_f32(b.d);
    const float m = f16_to_f32(b.m);
    const uint32_t qh = load_qh(b.qh);
    for (int j = 0; j < kQK / 2; ++j) {
      const int h0 = static_cast<int>((qh >> j) & 1u) << 4;
      const int h1 = static_cast<int>((qh >> (j + kQK / 2)) & 1u) << 4;
      const int x0 = (b.qs[j] & 0x0F) | h0;
      const int x1 = (b.qs[j] >> 4) | h1;
      dst[j] = static_cast<float>(x0) * d + m;
      dst[j + kQK / 2] = static_cast<float>(x1) * d + m;
    }
  }
}

void dequantize_blocks(const BlockQ8_0* src, float* dst, int64_t n_blocks) {
  for (int64_t i = 0; i < n_blocks; ++i, dst += kQK) {
    const BlockQ8_0& b = src[i];
    const float d = f16_to_f32(b.d);
    for (int j = 0; j < kQK; ++j) dst[j] = static_cast<float>(b.qs[j]) * d;
  }
}

}  // namespace kairo
