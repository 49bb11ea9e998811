// The AVX-VNNI loop for the roofline benchmark (vpdpbusd on ymm, CPUs with AVX-VNNI and no AVX-512): the ceiling of
// the AVX2 path's VNNI kernels.
#include <immintrin.h>

#include "bench/roofline_kernels.h"

namespace kairo::bench::roofline_kernels {

int64_t int8_dot_avxvnni(int64_t iters, uint8_t a, int8_t b) {
  const __m256i va = _mm256_set1_epi8(static_cast<char>(a));
  const __m256i vb = _mm256_set1_epi8(b);
  // Named accumulators, each a chain of vpdpbusd (the accumulator is an input, so nothing can be hoisted); 12 chains
  // cover the instruction's latency.
#define KAIRO_12(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)
#define KAIRO_DECL(k) __m256i acc##k = _mm256_setzero_si256();
#define KAIRO_STEP(k) acc##k = _mm256_dpbusd_avx_epi32(acc##k, va, vb);
#define KAIRO_SUM(k)                                                        \
  {                                                                         \
    alignas(32) int32_t lanes[8];                                           \
    _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), acc##k);          \
    for (int32_t l : lanes) total += l;                                     \
  }
  KAIRO_12(KAIRO_DECL)
  for (int64_t i = 0; i < iters; ++i) {
    KAIRO_12(KAIRO_STEP)
    asm volatile("" : "+x"(acc0), "+x"(acc6));
  }
  int64_t total = 0;
  KAIRO_12(KAIRO_SUM)
#undef KAIRO_12
#undef KAIRO_DECL
#undef KAIRO_STEP
#undef KAIRO_SUM
  return total;
}

}  // namespace kairo::bench::roofline_kernels
