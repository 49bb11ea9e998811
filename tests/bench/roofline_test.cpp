// The roofline loops do exactly the work they count (checked through their results); the measurement runs end to
// end on a small buffer. No speed is asserted here: speed is what `kairo bench roofline` prints.
#include <gtest/gtest.h>

#include <cstdlib>
#include <numeric>
#include <vector>

#include "bench/roofline.h"
#include "bench/roofline_kernels.h"
#include "kernels/cpu/cpu_features.h"

namespace kairo::bench {
namespace {

namespace rk = roofline_kernels;

struct Buffer {
  explicit Buffer(size_t n) : p(static_cast<uint64_t*>(std::aligned_alloc(64, n * 8))), n(n) {
    for (size_t i = 0; i < n; ++i) p[i] = i * 3 + 1;
  }
  ~Buffer() { std::free(p); }
  uint64_t expected() const { return 3 * (n * (n - 1) / 2) + n; }
  uint64_t* p;
  size_t n;
};

#if defined(__aarch64__)
TEST(RooflineKernels, NeonReadSumsEveryWordAndDotsCountTheirMultiplyAdds) {
  const auto& f = kernels::cpu::cpu_features();
  ASSERT_TRUE(f.neon);
  Buffer b(32 * 1000);
  EXPECT_EQ(rk::read_sum_neon(b.p, b.n), b.expected());
  EXPECT_EQ(rk::read_sum_prefetch_neon(b.p, b.n), b.expected());
  EXPECT_EQ(rk::int8_dot_neon(100, 3, -2), 100LL * 128 * 3 * -2);
  if (f.neon_dot) {
    EXPECT_EQ(rk::int8_dot_neondot(100, 3, -2), 100LL * 12 * 16 * 3 * -2);
  }
}
#else
TEST(RooflineKernels, ReadSumsEveryWord) {
  const auto& f = kernels::cpu::cpu_features();
  Buffer b(32 * 1000);
  if (f.avx2) {
    EXPECT_EQ(rk::read_sum_avx2(b.p, b.n), b.expected());
    EXPECT_EQ(rk::read_sum_prefetch_avx2(b.p, b.n), b.expected());
  }
  if (f.avx512) {
    EXPECT_EQ(rk::read_sum_avx512(b.p, b.n), b.expected());
    EXPECT_EQ(rk::read_sum_prefetch_avx512(b.p, b.n), b.expected());
  }
  if (!f.avx2) GTEST_SKIP() << "no AVX2 on this CPU";
}

TEST(RooflineKernels, Int8DotsCountTheirMultiplyAdds) {
  const auto& f = kernels::cpu::cpu_features();
  if (!f.avx2) GTEST_SKIP() << "no AVX2 on this CPU";
  // Every product is a × b; the sum over accumulator lanes is (number of products) × a × b.
  EXPECT_EQ(rk::int8_dot_avx2(100, 3, -2), 100LL * 12 * 32 * 3 * -2);
  if (f.avx_vnni) {
    EXPECT_EQ(rk::int8_dot_avxvnni(100, 3, -2), 100LL * 12 * 32 * 3 * -2);
  }
  if (f.avx512) {
    EXPECT_EQ(rk::int8_dot_vnni(100, 3, -2), 100LL * 12 * 64 * 3 * -2);
    if (f.avx512_bf16) {
      EXPECT_FLOAT_EQ(rk::bf16_dot_avx512(100, 1.5f), 12.0f * 100 * 2 * 1.5f * 1.5f);
    }
  }
}

TEST(RooflineKernels, AmxTilesCountTheirMultiplyAdds) {
  if (!rk::amx_available()) GTEST_SKIP() << "no AMX on this CPU (or Linux refused the tile permission)";
  EXPECT_EQ(rk::amx_int8_dot(50, 3, -2), 50LL * 64 * 3 * -2);  // C[0][0] += 64 products per tdpbssd
  if (rk::amx_bf16_available()) {
    EXPECT_FLOAT_EQ(rk::amx_bf16_dot(50), 50.0f * 32);
  }
}
#endif

TEST(Roofline, MeasuresEveryKindOnOneAndAllThreads) {
  RooflineOptions o;
  o.buffer_bytes = 8 << 20;
  o.n_threads = 2;
  o.seconds_per_test = 0.01;
  const RooflineResult r = measure_roofline(o);
  EXPECT_EQ(r.n_threads, 2);
  if (!kernels::cpu::cpu_features().avx2 && !kernels::cpu::cpu_features().neon) GTEST_SKIP() << "no SIMD path";
  int reads = 0, prefetch_reads = 0, int8s = 0;
  for (const auto& f : r.figures) {
    EXPECT_GT(f.value, 0) << f.name << " " << f.kernel;
    EXPECT_TRUE(f.n_threads == 1 || f.n_threads == 2);
    reads += f.name == "read";
    prefetch_reads += f.name == "read-prefetch";
    int8s += f.name == "int8";
  }
  EXPECT_EQ(reads, 2);
  EXPECT_EQ(prefetch_reads, 2);
  EXPECT_GE(int8s, 2);
  EXPECT_GT(r.read_gbs, 0);
  EXPECT_GT(r.read_gbs_1t, 0);
  EXPECT_GT(r.read_prefetch_gbs, 0);
  EXPECT_GT(r.read_prefetch_gbs_1t, 0);
  EXPECT_GT(r.int8_tops, 0);
  const plan::CpuMeasurement m = measure_cpu(o, 123);
  EXPECT_EQ(m.mem_available_bytes, 123u);
  EXPECT_GT(m.bandwidth_gbs, 0);
  EXPECT_EQ(m.n_threads, 2);
}

}  // namespace
}  // namespace kairo::bench
