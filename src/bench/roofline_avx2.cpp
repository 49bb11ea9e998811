// AVX2 loops for the roofline benchmark, for CPUs without AVX-512.
#include <immintrin.h>

#include "bench/roofline_kernels.h"

namespace kairo::bench::roofline_kernels {

namespace {

template <bool kPrefetch>
uint64_t read_sum(const uint64_t* p, size_t n) {
  __m256i s0 = _mm256_setzero_si256(), s1 = s0, s2 = s0, s3 = s0;
  for (size_t i = 0; i < n; i += 32) {
    if constexpr (kPrefetch)
      for (int l = 0; l < 256; l += 64)
        _mm_prefetch(reinterpret_cast<const char*>(p + i) + kReadPrefetchBytes + l, _MM_HINT_T0);
    for (size_t j = 0; j < 32; j += 16) {
      s0 = _mm256_add_epi64(s0, _mm256_load_si256(reinterpret_cast<const __m256i*>(p + i + j)));
      s1 = _mm256_add_epi64(s1, _mm256_load_si256(reinterpret_cast<const __m256i*>(p + i + j + 4)));
      s2 = _mm256_add_epi64(s2, _mm256_load_si256(reinterpret_cast<const __m256i*>(p + i + j + 8)));
      s3 = _mm256_add_epi64(s3, _mm256_load_si256(reinterpret_cast<const __m256i*>(p + i + j + 12)));
    }
  }
  alignas(32) uint64_t lanes[4];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes),
                     _mm256_add_epi64(_mm256_add_epi64(s0, s1), _mm256_add_epi64(s2, s3)));
  return lanes[0] + lanes[1] + lanes[2] + lanes[3];
}

}  // namespace

uint64_t read_sum_avx2(const uint64_t* p, size_t n) { return read_sum<false>(p, n); }
uint64_t read_sum_prefetch_avx2(const uint64_t* p, size_t n) { return read_sum<true>(p, n); }

#define KAIRO_ROOFLINE_4(X) X(0) X(1) X(2) X(3)

int64_t int8_dot_avx2(int64_t iters, uint8_t a, int8_t b) {
  // Four first operands, hidden from the optimizer before each of the three products they feed per round (empty asm
  // that "may change" them), so all 12 products are computed every round: with one loop-invariant operand pair the
  // compiler hoisted the multiply out of the loop and the figure counted additions alone (2.55 "TOP/s" on an EPYC
  // Zen 5). Four accumulators keep everything in AVX2's 16 vector registers.
  __m256i va0 = _mm256_set1_epi8(static_cast<char>(a)), va1 = va0, va2 = va0, va3 = va0;
  const __m256i vb = _mm256_set1_epi8(b);
  const __m256i ones = _mm256_set1_epi16(1);
  // The classic pre-VNNI int8 dot: u8×s8 pairs to i16 (vpmaddubsw), then pairs of i16 to i32 (vpmaddwd).
#define KAIRO_DECL(k) __m256i acc##k = _mm256_setzero_si256();
#define KAIRO_STEP(k) acc##k = _mm256_add_epi32(acc##k, _mm256_madd_epi16(_mm256_maddubs_epi16(va##k, vb), ones));
#define KAIRO_HIDE asm volatile("" : "+x"(va0), "+x"(va1), "+x"(va2), "+x"(va3));
#define KAIRO_SUM(k)                                                        \
  {                                                                         \
    alignas(32) int32_t lanes[8];                                           \
    _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), acc##k);          \
    for (int32_t l : lanes) total += l;                                     \
  }
  KAIRO_ROOFLINE_4(KAIRO_DECL)
  for (int64_t i = 0; i < iters; ++i) {
    KAIRO_HIDE KAIRO_ROOFLINE_4(KAIRO_STEP)
    KAIRO_HIDE KAIRO_ROOFLINE_4(KAIRO_STEP)
    KAIRO_HIDE KAIRO_ROOFLINE_4(KAIRO_STEP)
  }
  int64_t total = 0;
  KAIRO_ROOFLINE_4(KAIRO_SUM)
#undef KAIRO_HIDE
#undef KAIRO_DECL
#undef KAIRO_STEP
#undef KAIRO_SUM
  return total;
}

}  // namespace kairo::bench::roofline_kernels
