// The SDOT loop for the roofline benchmark (aarch64 with the dot-product extension).
#include <arm_neon.h>

#include "bench/roofline_kernels.h"

namespace kairo::bench::roofline_kernels {

int64_t int8_dot_neondot(int64_t iters, int8_t a, int8_t b) {
  // 12 independent SDOT chains (16 products each), the first operand hidden from the optimizer every round so the
  // products cannot be hoisted out of the loop.
  int8x16_t va = vdupq_n_s8(a);
  const int8x16_t vb = vdupq_n_s8(b);
  int32x4_t acc[12];
  for (auto& v : acc) v = vdupq_n_s32(0);
  for (int64_t i = 0; i < iters; ++i) {
    asm volatile("" : "+w"(va));
    for (auto& v : acc) v = vdotq_s32(v, va, vb);
  }
  int64_t total = 0;
  for (const auto& v : acc) total += vaddvq_s32(v);
  return total;  // iters x 12 x 16 multiply-adds
}

}  // namespace kairo::bench::roofline_kernels
