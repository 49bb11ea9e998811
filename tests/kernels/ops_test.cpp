// The elementwise ops, RoPE and KV writes of every optimized path against the reference, with lengths that are not
// multiples of any vector width (tails) as well as typical model sizes.
#include <gtest/gtest.h>

#include <vector>

#include "kernel_test_util.h"

namespace kairo::kernels {
namespace {

using testing::compare;
using testing::describe;
using testing::Diff;

class OpsTest : public ::testing::TestWithParam<cpu::Isa> {};

// Relative bound for f32 ops whose only error is rounding (and the polynomial exp, ~2e-7 relative).
void expect_close(const std::vector<float>& got, const std::vector<float>& ref, double rel = 1e-5) {
  const Diff d = compare(got, ref);
  EXPECT_LE(d.max_abs, rel * (d.rms_ref + 1e-30)) << describe(d);
}

TEST_P(OpsTest, RmsNorm) {
  KAIRO_BACKEND_OR_SKIP(be, GetParam());
  std::mt19937 rng(1);
  for (int64_t dim : {1, 7, 16, 100, 2048}) {
    for (int64_t n_tokens : {1, 3}) {
      const auto x = testing::random_floats(rng, n_tokens * dim, 3.0f);
      const auto wt = testing::random_floats(rng, dim);
      std::vector<float> ref(x.size()), got(x.size());
      reference_backend().rms_norm(x.data(), wt.data(), ref.data(), n_tokens, dim, 1e-5f);
      be->rms_norm(x.data(), wt.data(), got.data(), n_tokens, dim, 1e-5f);
      expect_close(got, ref);
      std::vector<float> inplace = x;  // y may alias x
      be->rms_norm(inplace.data(), wt.data(), inplace.data(), n_tokens, dim, 1e-5f);
      expect_close(inplace, ref);
    }
  }
}

TEST_P(OpsTest, RopeNormalAndNeox) {
  KAIRO_BACKEND_OR_SKIP(be, GetParam());
  std::mt19937 rng(2);
  struct Case {
    int n_heads, head_dim, n_rot;
    RopeStyle style;
  };
  for (const Case& c : {Case{7, 64, 64, RopeStyle::Normal}, Case{3, 128, 128, RopeStyle::Neox},
                        Case{5, 64, 32, RopeStyle::Normal}, Case{2, 40, 24, RopeStyle::Neox},
                        Case{1, 6, 6, RopeStyle::Normal}}) {
    RopeParams p;
    p.n_heads = c.n_heads;
    p.head_dim = c.head_dim;
    p.n_rot = c.n_rot;
    p.style = c.style;
    p.freq_base = 500000.0f;
    p.freq_scale = 0.5f;
    const int64_t n_tokens = 5;
    const std::vector<int32_t> pos = {0, 1, 17, 1000, 4095};
    auto ref = testing::random_floats(rng, n_tokens * c.n_heads * c.head_dim);
    auto got = ref;
    reference_backend().rope(ref.data(), pos.data(), n_tokens, p);
    be->rope(got.data(), pos.data(), n_tokens, p);
    expect_close(got, ref);
  }
}

// llama-3 rope scaling: each pair's angle divided by its frequency factor (the rope_freqs tensor).
TEST_P(OpsTest, RopeWithFrequencyFactors) {
  KAIRO_BACKEND_OR_SKIP(be, GetParam());
  std::mt19937 rng(4);
  std::uniform_real_distribution<float> factor(1.0f, 8.0f);
  for (RopeStyle style : {RopeStyle::Normal, RopeStyle::Neox}) {
    RopeParams p;
    p.n_heads = 3;
    p.head_dim = 64;
    p.n_rot = 64;
    p.style = style;
    p.freq_base = 500000.0f;
    std::vector<float> factors(32);
    for (float& f : factors) f = factor(rng);
    p.freq_factors = factors.data();
    p.mscale = style == RopeStyle::Neox ? 1.1386f : 1.0f;  // YaRN's magnitude correction (x4) on one of them
    const std::vector<int32_t> pos = {0, 5, 300, 8191, 100000};
    auto ref = testing::random_floats(rng, pos.size() * p.n_heads * p.head_dim);
    auto got = ref;
    reference_backend().rope(ref.data(), pos.data(), static_cast<int64_t>(pos.size()), p);
    be->rope(got.data(), pos.data(), static_cast<int64_t>(pos.size()), p);
    expect_close(got, ref);
  }
}

// The reference against an independent computation of one rotation: pair i of a Normal-style head at position p
// turns by p * base^(-2i / n_rot) / factor_i.
TEST(RopeReference, FrequencyFactorsDivideTheAngle) {
  RopeParams p;
  p.n_heads = 1;
  p.head_dim = 4;
  p.n_rot = 4;
  p.freq_base = 10000.0f;
  const float factors[2] = {1.0f, 4.0f};
  p.freq_factors = factors;
  std::vector<float> x = {1.0f, 0.0f, 1.0f, 0.0f};
  const int32_t pos = 3000;
  reference_backend().rope(x.data(), &pos, 1, p);
  EXPECT_NEAR(x[0], std::cos(3000.0), 1e-6);
  EXPECT_NEAR(x[1], std::sin(3000.0), 1e-6);
  EXPECT_NEAR(x[2], std::cos(3000.0 / 100.0 / 4.0), 1e-6);  // base^(-2/4) = 1/100, then / 4
  EXPECT_NEAR(x[3], std::sin(3000.0 / 100.0 / 4.0), 1e-6);
}

TEST_P(OpsTest, SwigluAddBias) {
  KAIRO_BACKEND_OR_SKIP(be, GetParam());
  std::mt19937 rng(3);
  for (int64_t n : {1, 15, 17, 5632}) {
    const auto g = testing::random_floats(rng, n, 4.0f);
    const auto u = testing::random_floats(rng, n);
    std::vector<float> ref(n), got(n);
    reference_backend().swiglu(g.data(), u.data(), ref.data(), n);
    be->swiglu(g.data(), u.data(), got.data(), n);
    expect_close(got, ref);

    auto y_ref = testing::random_floats(rng, n);
    auto y_got = y_ref;
    reference_backend().add(y_ref.data(), u.data(), n);
    be->add(y_got.data(), u.data(), n);
    EXPECT_EQ(y_got, y_ref);  // a single rounding either way: bit-identical

    auto b_ref = testing::random_floats(rng, 3 * n);
    auto b_got = b_ref;
    reference_backend().add_bias(b_ref.data(), g.data(), 3, n);
    be->add_bias(b_got.data(), g.data(), 3, n);
    EXPECT_EQ(b_got, b_ref);
  }
  // Extreme gates: silu saturates to 0 and to the identity without NaN.
  const std::vector<float> g = {-200.0f, -90.0f, -20.0f, 0.0f, 20.0f, 90.0f, 200.0f, 1e-30f,
                                -1e-30f, 3.0f,   -3.0f,  1.0f, 2.0f,  -1.0f, 0.5f,   -0.5f, 7.0f};
  const std::vector<float> u(g.size(), 1.0f);
  std::vector<float> ref(g.size()), got(g.size());
  reference_backend().swiglu(g.data(), u.data(), ref.data(), static_cast<int64_t>(g.size()));
  be->swiglu(g.data(), u.data(), got.data(), static_cast<int64_t>(g.size()));
  for (size_t i = 0; i < g.size(); ++i) EXPECT_NEAR(got[i], ref[i], 1e-6 * std::max(1.0f, std::fabs(ref[i]))) << g[i];
}

// GELU (tanh form) through the sigmoid: within a few f32 ulps of the double reference, saturating without NaN.
TEST_P(OpsTest, GegluMatchesReference) {
  KAIRO_BACKEND_OR_SKIP(be, GetParam());
  std::mt19937 rng(8);
  for (int64_t n : {1, 15, 17, 6912}) {
    const auto g = testing::random_floats(rng, n, 4.0f);
    const auto u = testing::random_floats(rng, n);
    std::vector<float> ref(n), got(n);
    reference_backend().geglu(g.data(), u.data(), ref.data(), n);
    be->geglu(g.data(), u.data(), got.data(), n);
    expect_close(got, ref);
  }
  const std::vector<float> g = {-200.0f, -90.0f, -20.0f, -5.0f, 0.0f, 20.0f, 90.0f, 200.0f, 1e-30f,
                                -1e-30f, 3.0f,   -3.0f,  1.0f,  2.0f, -1.0f, 0.5f,  -0.5f};
  const std::vector<float> u(g.size(), 1.0f);
  std::vector<float> ref(g.size()), got(g.size());
  reference_backend().geglu(g.data(), u.data(), ref.data(), static_cast<int64_t>(g.size()));
  be->geglu(g.data(), u.data(), got.data(), static_cast<int64_t>(g.size()));
  for (size_t i = 0; i < g.size(); ++i) EXPECT_NEAR(got[i], ref[i], 1e-6 * std::max(1.0f, std::fabs(ref[i]))) << g[i];
  // gelu(1) = 0.8411920 (tanh form), gelu(-1) = -0.1588080
  EXPECT_NEAR(ref[12], 0.8411920, 1e-6);
  EXPECT_NEAR(ref[14], -0.1588080, 1e-6);
}

TEST_P(OpsTest, KvWriteMatchesReferenceBitForBit) {
  KAIRO_BACKEND_OR_SKIP(be, GetParam());
  std::mt19937 rng(4);
  for (DType dt : {DType::F32, DType::F16, DType::BF16}) {
    for (int head_dim : {64, 20}) {
      const int n_kv_heads = 3;
      const int64_t row = n_kv_heads * head_dim;
      const int64_t n_slots = 64;
      const size_t elem = dt == DType::F32 ? 4 : 2;
      std::vector<uint8_t> k_ref(n_slots * row * elem, 0), v_ref = k_ref, k_got = k_ref, v_got = k_ref;
      const std::vector<int64_t> slots = {5, 63, 0, 17, 40};
      const auto k = testing::random_floats(rng, slots.size() * row);
      const auto v = testing::random_floats(rng, slots.size() * row);
      KvLayerView ref_view{k_ref.data(), v_ref.data(), dt, n_kv_heads, head_dim, 16};
      KvLayerView got_view{k_got.data(), v_got.data(), dt, n_kv_heads, head_dim, 16};
      reference_backend().kv_write(ref_view, slots.data(), k.data(), v.data(), static_cast<int64_t>(slots.size()));
      be->kv_write(got_view, slots.data(), k.data(), v.data(), static_cast<int64_t>(slots.size()));
      EXPECT_EQ(k_got, k_ref) << dtype_name(dt);
      EXPECT_EQ(v_got, v_ref) << dtype_name(dt);
    }
  }
}

TEST_P(OpsTest, GetRow) {
  KAIRO_BACKEND_OR_SKIP(be, GetParam());
  std::mt19937 rng(5);
  for (DType dt : {DType::F32, DType::F16, DType::Q4_K, DType::Q8_0}) {
    const int64_t n_cols = 512, n_rows = 4;
    const size_t rb = row_bytes(dt, n_cols);
    std::vector<uint8_t> data(rb * n_rows);
    for (int64_t r = 0; r < n_rows; ++r) testing::random_row(rng, dt, n_cols, data.data() + r * rb);
    const MatrixView t{dt, data.data(), n_rows, n_cols, rb};
    std::vector<float> ref(n_cols), got(n_cols);
    reference_backend().get_row(t, 2, ref.data());
    be->get_row(t, 2, got.data());
    EXPECT_EQ(got, ref);
  }
}

INSTANTIATE_TEST_SUITE_P(Isas, OpsTest, ::testing::ValuesIn(testing::optimized_isas()), testing::isa_param_name);

TEST(Dispatch, BestBackendIsTheBestSupportedIsa) {
  const cpu::Isa best = cpu::best_isa();
  EXPECT_TRUE(cpu::isa_supported(best));
  EXPECT_EQ(&best_cpu_backend(), cpu::cpu_backend(best));
  for (cpu::Isa isa : cpu::kAllIsas) {
    if (cpu::isa_supported(isa)) EXPECT_NE(cpu::cpu_backend(isa), nullptr) << cpu::isa_name(isa);
    else EXPECT_EQ(cpu::cpu_backend(isa), nullptr) << cpu::isa_name(isa);
  }
  EXPECT_EQ(cpu::cpu_backend(cpu::Isa::Scalar), &reference_backend());
}

}  // namespace
}  // namespace kairo::kernels
