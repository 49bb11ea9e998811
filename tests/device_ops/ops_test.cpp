// rms_norm, rope, swiglu, add, add_bias, gather_rows and add_rows_scaled against the scalar reference.
#include <random>

#include "kernels/kernel_test_util.h"
#include "kernels/ref/ref_ops.h"
#include "device_ops/device_ops_util.h"

namespace kairo::kernels::device_ops {
namespace {

using kernels::testing::random_floats;
using testing::from_device;
using testing::rel_error;
using testing::to_device;

// rms_norm: f32 sum of squares in a fixed tree (error ~ (dim/256 + 8) roundings of a positive sum, ~1e-6 relative)
// against the reference's double; the scale and the two products add a few ulps.
TEST(DeviceOps, RmsNormMatchesReferenceInPlaceAndNot) {
  KAIRO_TEST_DEVICE(d);
  std::mt19937 rng(1);
  for (const auto& [n_tokens, dim] : {std::pair<int64_t, int64_t>{1, 64}, {3, 250}, {17, 1000}, {33, 4096}}) {
    const std::vector<float> x = random_floats(rng, static_cast<size_t>(n_tokens * dim), 3.0f);
    const std::vector<float> w = random_floats(rng, static_cast<size_t>(dim));
    std::vector<float> ref(x.size());
    ref::rms_norm(x.data(), w.data(), ref.data(), n_tokens, dim, 1e-5f);
    DeviceSpan xs = to_device(*d, x), ws = to_device(*d, w), ys = testing::zeros(*d, x.size() * 4);
    d->rms_norm(xs, ws, ys, n_tokens, dim, 1e-5f);
    EXPECT_LE(rel_error(from_device<float>(*d, ys, x.size()), ref), 2e-6) << n_tokens << "x" << dim;
    d->rms_norm(xs, ws, xs, n_tokens, dim, 1e-5f);  // y aliases x
    EXPECT_LE(rel_error(from_device<float>(*d, xs, x.size()), ref), 2e-6) << n_tokens << "x" << dim << " in place";
    d->free(xs);
    d->free(ws);
    d->free(ys);
  }
}

// rope: the angle is kept to a few float ulps of the reference's double angle (see rope.comp), so the rotated
// values differ by a few ulps of their magnitude even at positions near 32k; 2e-6 of the vector's max.
TEST(DeviceOps, RopeMatchesReferenceForBothStylesAndPartialRotation) {
  KAIRO_TEST_DEVICE(d);
  std::mt19937 rng(2);
  struct Case {
    int n_heads, head_dim, n_rot;
    float base, scale;
    RopeStyle style;
  };
  const Case cases[] = {{4, 64, 64, 10000.0f, 1.0f, RopeStyle::Normal},
                        {3, 128, 128, 1000000.0f, 1.0f, RopeStyle::Neox},
                        {2, 80, 32, 10000.0f, 0.25f, RopeStyle::Normal},
                        {5, 40, 40, 500000.0f, 0.5f, RopeStyle::Neox}};
  const std::vector<int32_t> positions = {0, 1, 7, 100, 4095, 32767, 31000, 12345, 2, 65000, 3, 9999, 17, 0, 1, 5, 8};
  for (const Case& c : cases) {
    for (int64_t n_tokens : {1, 3, 17}) {
      const std::vector<int32_t> pos(positions.begin(), positions.begin() + n_tokens);
      const RopeParams p{c.n_heads, c.head_dim, c.n_rot, c.base, c.scale, c.style};
      std::vector<float> x = random_floats(rng, static_cast<size_t>(n_tokens * c.n_heads * c.head_dim));
      DeviceSpan xs = to_device(*d, x), ps = to_device(*d, pos);
      d->rope(xs, ps, n_tokens, p);
      ref::rope(x.data(), pos.data(), n_tokens, p);
      EXPECT_LE(rel_error(from_device<float>(*d, xs, x.size()), x), 2e-6)
          << "head_dim " << c.head_dim << " n_rot " << c.n_rot << " tokens " << n_tokens;
      d->free(xs);
      d->free(ps);
    }
  }
  // llama-3 rope scaling: per-pair frequency factors (two sets, so the device's cached table is keyed by them).
  for (const float scale_factors : {1.0f, 8.0f}) {
    std::vector<float> factors(32);
    for (size_t i = 0; i < factors.size(); ++i) factors[i] = 1.0f + scale_factors * static_cast<float>(i) / 32.0f;
    RopeParams p{4, 64, 64, 500000.0f, 1.0f, RopeStyle::Normal};
    p.freq_factors = factors.data();
    p.mscale = scale_factors > 1.0f ? 1.2079f : 1.0f;  // YaRN's magnitude correction (x8)
    const std::vector<int32_t> pos(positions.begin(), positions.end());
    std::vector<float> x = random_floats(rng, pos.size() * 4 * 64);
    DeviceSpan xs = to_device(*d, x), ps = to_device(*d, pos);
    d->rope(xs, ps, static_cast<int64_t>(pos.size()), p);
    ref::rope(x.data(), pos.data(), static_cast<int64_t>(pos.size()), p);
    EXPECT_LE(rel_error(from_device<float>(*d, xs, x.size()), x), 2e-6) << "factors up to " << 1 + scale_factors;
    d->free(xs);
    d->free(ps);
  }
}

// swiglu, geglu: exp and a division, a few ulps each (GLSL exp is accurate to 3 + 2|x| ulp).
TEST(DeviceOps, ElementwiseOpsMatchReference) {
  KAIRO_TEST_DEVICE(d);
  std::mt19937 rng(3);
  const int64_t n_tokens = 17, n = 250;
  const size_t total = static_cast<size_t>(n_tokens * n);
  const std::vector<float> g = random_floats(rng, total, 3.0f), u = random_floats(rng, total);
  const std::vector<float> bias = random_floats(rng, static_cast<size_t>(n));
  DeviceSpan gs = to_device(*d, g), us = to_device(*d, u), bs = to_device(*d, bias), os = testing::zeros(*d, total * 4);

  std::vector<float> ref(total);
  ref::swiglu(g.data(), u.data(), ref.data(), static_cast<int64_t>(total));
  d->swiglu(gs, us, os, static_cast<int64_t>(total));
  EXPECT_LE(rel_error(from_device<float>(*d, os, total), ref), 1e-6);

  ref::geglu(g.data(), u.data(), ref.data(), static_cast<int64_t>(total));
  d->geglu(gs, us, os, static_cast<int64_t>(total));
  EXPECT_LE(rel_error(from_device<float>(*d, os, total), ref), 1e-6);

  std::vector<float> y = g;
  ref::add(y.data(), u.data(), static_cast<int64_t>(total));
  d->add(gs, us, static_cast<int64_t>(total));
  EXPECT_EQ(from_device<float>(*d, gs, total), y);

  ref::add_bias(y.data(), bias.data(), n_tokens, n);
  d->add_bias(gs, bs, n_tokens, n);
  EXPECT_EQ(from_device<float>(*d, gs, total), y);

  // swiglu_oai against the CPU device's loop (the reference for this op): clamps at +-7 hit by the 3x gates. The
  // gates are gs as the ops above left it (y on the host).
  {
    auto cpu = kernels::make_cpu_device();
    std::vector<float> want(total);
    cpu->swiglu_oai(DeviceSpan{y.data()}, DeviceSpan{const_cast<float*>(u.data())},
                    DeviceSpan{want.data()}, static_cast<int64_t>(total), 1.702f, 7.0f);
    d->swiglu_oai(gs, us, os, static_cast<int64_t>(total), 1.702f, 7.0f);
    EXPECT_LE(rel_error(from_device<float>(*d, os, total), want), 1e-6);
  }

  for (float& v : y) v *= 0.375f;  // one rounding, as the shader's
  d->scale(gs, static_cast<int64_t>(total), 0.375f);
  EXPECT_EQ(from_device<float>(*d, gs, total), y);

  const std::vector<int32_t> rows = {16, 0, 3, 3, 9};
  DeviceSpan rs = to_device(*d, rows);
  d->gather_rows(gs, rs, static_cast<int64_t>(rows.size()), n, os);
  const std::vector<float> got = from_device<float>(*d, os, rows.size() * n);
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_TRUE(std::equal(got.begin() + static_cast<int64_t>(i) * n, got.begin() + static_cast<int64_t>(i + 1) * n,
                           y.begin() + rows[i] * n))
        << "row " << i;
  }
  for (DeviceSpan s : {gs, us, bs, os, rs}) d->free(s);
}

// add_rows_scaled: one product and one sum per element (precise in the shader), as the CPU device's loop rounds.
TEST(DeviceOps, AddRowsScaledMatchesTheHostLoop) {
  KAIRO_TEST_DEVICE(d);
  std::mt19937 rng(5);
  const int64_t n_rows = 9, dim = 300;
  const std::vector<int32_t> rows = {7, 0, 3, 8};
  const std::vector<float> scales = {0.25f, -1.5f, 0.7f, 1.0f};
  const std::vector<float> y0 = random_floats(rng, static_cast<size_t>(n_rows * dim));
  const std::vector<float> x = random_floats(rng, rows.size() * dim);
  DeviceSpan ys = to_device(*d, y0), xs = to_device(*d, x), rs = to_device(*d, rows), ss = to_device(*d, scales);
  d->add_rows_scaled(ys, xs, rs, ss, static_cast<int64_t>(rows.size()), dim);
  std::vector<float> want = y0;
  for (size_t i = 0; i < rows.size(); ++i) {
    for (int64_t c = 0; c < dim; ++c) {
      volatile float product = scales[i] * x[i * dim + static_cast<size_t>(c)];  // no fused multiply-add
      want[static_cast<size_t>(rows[i] * dim + c)] += product;
    }
  }
  EXPECT_EQ(from_device<float>(*d, ys, want.size()), want);
  for (DeviceSpan s : {ys, xs, rs, ss}) d->free(s);
}

// Offsets that are not multiples of minStorageBufferOffsetAlignment: bound aligned down, remainder in the shader.
TEST(DeviceOps, SpansAtUnalignedOffsetsWork) {
  KAIRO_TEST_DEVICE(d);
  std::mt19937 rng(4);
  const std::vector<float> a = random_floats(rng, 100), b = random_floats(rng, 100);
  DeviceSpan big = testing::zeros(*d, 4096);
  d->upload(big.at(4 * 3), a.data(), 400);
  d->upload(big.at(4 * 501), b.data(), 400);
  d->add(big.at(4 * 3), big.at(4 * 501), 100);
  std::vector<float> ref = a;
  ref::add(ref.data(), b.data(), 100);
  EXPECT_EQ(from_device<float>(*d, big.at(12), 100), ref);
  d->free(big);
}

}  // namespace
}  // namespace kairo::kernels::device_ops
