// Activation quantization with NEON for the row-tile kernels: per block of 32, scale = max|x| / 127,
// q = round-to-nearest-even(x / scale), and the block's float sum added in the order of the AVX-512 quantizer
// (GCC's _mm512_reduce_add_ps over x[0..16) + x[16..32)), so every ISA gives every token the same bits.
#include <arm_neon.h>

#include "kernels/cpu/act_quant.h"

namespace kairo::kernels::neon {
namespace {

// x[i] + x[16 + i] (i < 16), then lanes 8-15 + lanes 0-7, then lanes 4-7 + 0-3, then lanes (0 + 2, 1 + 3), then
// their sum: the additions of the AVX-512 reduction, in its association (float addition commutes exactly).
inline float block_sum(const float32x4_t* x) {
  const float32x4_t t3_lo = vaddq_f32(vaddq_f32(x[2], x[6]), vaddq_f32(x[0], x[4]));
  const float32x4_t t3_hi = vaddq_f32(vaddq_f32(x[3], x[7]), vaddq_f32(x[1], x[5]));
  const float32x4_t t6 = vaddq_f32(t3_hi, t3_lo);
  const float32x2_t t8 = vadd_f32(vget_low_f32(t6), vget_high_f32(t6));
  return vget_lane_f32(t8, 0) + vget_lane_f32(t8, 1);
}

inline void quantize_block(const float* x, int8_t* q, float* d_out, float* s_out) {
  float32x4_t v[8];
  float32x4_t m = vdupq_n_f32(0.0f);
  for (int i = 0; i < 8; ++i) {
    v[i] = vld1q_f32(x + 4 * i);
    m = vmaxq_f32(m, vabsq_f32(v[i]));
  }
  const float amax = vmaxvq_f32(m);
  const float32x4_t id = vdupq_n_f32(amax > 0.0f ? 127.0f / amax : 0.0f);
  for (int i = 0; i < 8; i += 2) {  // to nearest even, then saturating narrows (int16, then int8)
    const int16x8_t h = vcombine_s16(vqmovn_s32(vcvtnq_s32_f32(vmulq_f32(v[i], id))),
                                     vqmovn_s32(vcvtnq_s32_f32(vmulq_f32(v[i + 1], id))));
    vst1_s8(q + 4 * i, vqmovn_s16(h));
  }
  *d_out = amax / 127.0f;
  *s_out = block_sum(v);
}

}  // namespace

void quantize_act_q8(const float* x, cpu::ActQ8& a) {
  cpu::quantize_blocks(x, a, quantize_block);
  // Sums of each 4 consecutive q (a dot lane), then of each block.
  for (int64_t i = 0; i < a.n_pad; i += 32) {
    const int32x4_t s0 = vpaddlq_s16(vpaddlq_s8(vld1q_s8(a.q + i)));
    const int32x4_t s1 = vpaddlq_s16(vpaddlq_s8(vld1q_s8(a.q + i + 16)));
    vst1q_s32(a.sum4 + i / 4, s0);
    vst1q_s32(a.sum4 + i / 4 + 4, s1);
    a.bsum[i / 32] = vaddvq_s32(vaddq_s32(s0, s1));
  }
  cpu::fill_zero_points(a);
}

}  // namespace kairo::kernels::neon
