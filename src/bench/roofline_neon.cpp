// NEON loops for the roofline benchmark on aarch64.
#include <arm_neon.h>

#include "bench/roofline_kernels.h"

namespace kairo::bench::roofline_kernels {

namespace {

template <bool kPrefetch>
uint64_t read_sum(const uint64_t* p, size_t n) {
  uint64x2_t s0 = vdupq_n_u64(0), s1 = s0, s2 = s0, s3 = s0;
  for (size_t i = 0; i < n; i += 32) {
    if constexpr (kPrefetch)
      for (int l = 0; l < 256; l += 64) __builtin_prefetch(reinterpret_cast<const char*>(p + i) + kReadPrefetchBytes + l, 0, 3);
    for (size_t j = 0; j < 32; j += 8) {
      s0 = vaddq_u64(s0, vld1q_u64(p + i + j));
      s1 = vaddq_u64(s1, vld1q_u64(p + i + j + 2));
      s2 = vaddq_u64(s2, vld1q_u64(p + i + j + 4));
      s3 = vaddq_u64(s3, vld1q_u64(p + i + j + 6));
    }
  }
  const uint64x2_t s = vaddq_u64(vaddq_u64(s0, s1), vaddq_u64(s2, s3));
  return vgetq_lane_u64(s, 0) + vgetq_lane_u64(s, 1);
}

}  // namespace

uint64_t read_sum_neon(const uint64_t* p, size_t n) { return read_sum<false>(p, n); }
uint64_t read_sum_prefetch_neon(const uint64_t* p, size_t n) { return read_sum<true>(p, n); }

int64_t int8_dot_neon(int64_t iters, int8_t a, int8_t b) {
  // The plain NEON kernels' int8 dot: SMLAL byte products into 16 bits, pairwise-widened (SADALP) every 2 rounds
  // as the kernels widen every few groups. Eight accumulators, both halves of each operand; the empty asm keeps the
  // compiler from hoisting the products out of the loop.
  int8x16_t va = vdupq_n_s8(a);
  const int8x16_t vb = vdupq_n_s8(b);
  int32x4_t acc[8];
  for (auto& v : acc) v = vdupq_n_s32(0);
  for (int64_t i = 0; i < iters; ++i) {
    asm volatile("" : "+w"(va));
    int16x8_t s[8];
    for (int k = 0; k < 4; ++k) {
      s[2 * k] = vmull_s8(vget_low_s8(va), vget_low_s8(vb));
      s[2 * k + 1] = vmull_high_s8(va, vb);
    }
    asm volatile("" : "+w"(va));
    for (int k = 0; k < 4; ++k) {
      s[2 * k] = vmlal_s8(s[2 * k], vget_low_s8(va), vget_low_s8(vb));
      s[2 * k + 1] = vmlal_high_s8(s[2 * k + 1], va, vb);
    }
    for (int k = 0; k < 8; ++k) acc[k] = vpadalq_s16(acc[k], s[k]);
  }
  int64_t total = 0;
  for (const auto& v : acc) total += vaddvq_s32(v);
  return total;  // iters x 2 rounds x 8 vectors x 8 products: iters x 128 multiply-adds
}

}  // namespace kairo::bench::roofline_kernels
