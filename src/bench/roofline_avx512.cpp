// AVX-512 loops for the roofline benchmark (compiled with AVX-512 F/BW/VL/VNNI/BF16 flags; called only when the
// CPU has them).
// GCC 12 reports its own AVX-512 reduce intrinsics (deliberately undefined upper lanes) as uninitialized.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#include <immintrin.h>

#include "bench/roofline_kernels.h"

namespace kairo::bench::roofline_kernels {

namespace {

template <bool kPrefetch>
uint64_t read_sum(const uint64_t* p, size_t n) {
  // Four independent accumulators keep the adds off the critical path; the loads are the work.
  __m512i s0 = _mm512_setzero_si512(), s1 = s0, s2 = s0, s3 = s0;
  for (size_t i = 0; i < n; i += 32) {
    if constexpr (kPrefetch)
      for (int l = 0; l < 256; l += 64)
        _mm_prefetch(reinterpret_cast<const char*>(p + i) + kReadPrefetchBytes + l, _MM_HINT_T0);
    s0 = _mm512_add_epi64(s0, _mm512_load_si512(p + i));
    s1 = _mm512_add_epi64(s1, _mm512_load_si512(p + i + 8));
    s2 = _mm512_add_epi64(s2, _mm512_load_si512(p + i + 16));
    s3 = _mm512_add_epi64(s3, _mm512_load_si512(p + i + 24));
  }
  return static_cast<uint64_t>(
      _mm512_reduce_add_epi64(_mm512_add_epi64(_mm512_add_epi64(s0, s1), _mm512_add_epi64(s2, s3))));
}

}  // namespace

uint64_t read_sum_avx512(const uint64_t* p, size_t n) { return read_sum<false>(p, n); }
uint64_t read_sum_prefetch_avx512(const uint64_t* p, size_t n) { return read_sum<true>(p, n); }

// Twelve named accumulators, not an array: GCC keeps an indexed array in memory and stores it every iteration.
#define KAIRO_ROOFLINE_12(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)

int64_t int8_dot_vnni(int64_t iters, uint8_t a, int8_t b) {
  const __m512i va = _mm512_set1_epi8(static_cast<char>(a));
  const __m512i vb = _mm512_set1_epi8(b);
  // 12 chains: vpdpbusd has ~5 cycles latency at 2 per cycle, so 10+ independent ones keep both ports busy.
#define KAIRO_DECL(k) __m512i acc##k = _mm512_setzero_si512();
#define KAIRO_STEP(k) acc##k = _mm512_dpbusd_epi32(acc##k, va, vb);
#define KAIRO_SUM(k) total += _mm512_reduce_add_epi32(acc##k);
  KAIRO_ROOFLINE_12(KAIRO_DECL)
  for (int64_t i = 0; i < iters; ++i) {
    KAIRO_ROOFLINE_12(KAIRO_STEP)
    // Hides the inputs' constness so the loop is not folded into a multiplication.
    asm volatile("" : "+v"(acc0), "+v"(acc6));
  }
  int64_t total = 0;
  KAIRO_ROOFLINE_12(KAIRO_SUM)
#undef KAIRO_DECL
#undef KAIRO_STEP
#undef KAIRO_SUM
  return total;
}

// AVX512_BF16 for this function alone: the file's flags leave it out (CPUs of the AVX-512 path may lack it; the caller
// checks cpu_features().avx512_bf16).
__attribute__((target("avx512bf16"))) float bf16_dot_avx512(int64_t iters, float x) {
  const __m512bh v = _mm512_cvtne2ps_pbh(_mm512_set1_ps(x), _mm512_set1_ps(x));
#define KAIRO_DECL(k) __m512 acc##k = _mm512_setzero_ps();
#define KAIRO_STEP(k) acc##k = _mm512_dpbf16_ps(acc##k, v, v);
#define KAIRO_SUM(k) total += _mm512_cvtss_f32(acc##k);  // lane 0 of each accumulator
  KAIRO_ROOFLINE_12(KAIRO_DECL)
  for (int64_t i = 0; i < iters; ++i) {
    KAIRO_ROOFLINE_12(KAIRO_STEP)
    asm volatile("" : "+v"(acc0), "+v"(acc6));
  }
  float total = 0;
  KAIRO_ROOFLINE_12(KAIRO_SUM)
#undef KAIRO_DECL
#undef KAIRO_STEP
#undef KAIRO_SUM
  return total;
}

}  // namespace kairo::bench::roofline_kernels
