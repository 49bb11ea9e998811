// Reference dequantization of the 256-element K-quant super-blocks. Expressions mirror ggml's dequantize_row_q*_K
// (sub-block scale = d * sc computed first, then * q, then - dmin * m) so results are bit-identical.
#include "core/half.h"
#include "tensor/dequant.h"

namespace kairo {

void dequantize_blocks(const BlockQ4_K* src, float* dst, int64_t n_blocks) {
  for (int64_t i = 0; i < n_blocks; ++i) {
    const BlockQ4_K& b = src[i];
    const float d = f16_to_f32(b.d);
    const float dmin = f16_to_f32(b.dmin);
    const uint8_t* q = b.qs;
    // Each 32 bytes of qs hold two sub-blocks: low nibbles, then high nibbles.
    for (int sub = 0; sub < 8; sub += 2, q += 32) {
      uint8_t sc, m;
      unpack_scale_min_k4(sub, b.scales, &sc, &m);
      const float d_lo = d * static_cast<float>(sc);
      const float m_lo = dmin * static_cast<float>(m);
      unpack_scale_min_k4(sub + 1, b.scales, &sc, &m);
      const float d_hi = d * static_cast<float>(sc);
      const float m_hi = dmin * static_cast<float>(m);
      for (int l = 0; l < 32; ++l) *dst++ = d_lo * static_cast<float>(q[l] & 0x0F) - m_lo;
      for (int l = 0; l < 32; ++l) *dst++ = d_hi * static_cast<float>(q[l] >> 4) - m_hi;
    }
  }
}

void dequantize_blocks(const BlockQ5_K* src, float* dst, int64_t n_blocks) {
  for (int64_t i = 0; i < n_blocks; ++i) {
    const BlockQ5_K& b = src[i];
    const float d = f16_to_f32(b.d);
    const float dmin = f16_to_f32(b.dmin);
    const uint8_t* ql = b.qs;
    uint8_t bit_lo = 1, bit_hi = 2;  // qh bit of the current sub-block pair
    for (int sub = 0; sub < 8; sub += 2, ql += 32, bit_lo <<= 2, bit_hi <<= 2) {
      uint8_t sc, m;
      unpack_scale_min_k4(sub, b.scales, &sc, &m);
      const float d_lo = d * static_cast<float>(sc);
      const float m_lo = dmin * static_cast<float>(m);
      unpack_scale_min_k4(sub + 1, b.scales, &sc, &m);
      const float d_hi = d * static_cast<float>(sc);
      const float m_hi = dmin * static_cast<float>(m);
      for (int l = 0; l < 32; ++l) {
        const int q = (ql[l] & 0x0F) + ((b.qh[l] & bit_lo) ? 16 : 0);
        *dst++ = d_lo * static_cast<float>(q) - m_lo;
      }
      for (int l = 0; l < 32; ++l) {
        const int q = (ql[l] >> 4) + ((b.qh[l] & bit_hi) ? 16 : 0);
        *dst++ = d_hi * static_cast<float>(q) - m_hi;
      }
    }
  }
}

void dequantize_blocks(const BlockQ6_K* src, float* dst, int64_t n_blocks) {
  for (int64_t i = 0; i < n_blocks; ++i) {
    const BlockQ6_K& b = src[i];
    const float d = f16_to_f32(b.d);
    for (int half = 0; half < 2; ++half, dst += 128) {
      const uint8_t* ql = b.ql + 64 * half;
      const uint8_t* qh = b.qh + 32 * half;
      const int8_t* sc = b.scales + 8 * half;
      for (int l = 0; l < 32; ++l) {
        const int is = l / 16;
        const int q1 = ((ql[l] & 0x0F) | (((qh[l] >> 0) & 3) << 4)) - 32;
        const int q2 = ((ql[l + 32] & 0x0F) | (((qh[l] >> 2) & 3) << 4)) - 32;
        const int q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
        const int q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
        dst[l] = d * static_cast<float>(sc[is]) * static_cast<float>(q1);
        dst[l + 32] = d * static_cast<float>(sc[is + 2]) * static_cast<float>(q2);
        dst[l + 64] = d * static_cast<float>(sc[is + 4]) * static_cast<float>(q3);
        dst[l + 96] = d * static_cast<float>(sc[is + 6]) * static_cast<float>(q4);
      }
    }
  }
}

}  // namespace kairo
