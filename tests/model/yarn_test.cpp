// YaRN rope scaling read from GGUF metadata, against an independent computation of Hugging Face's
// _compute_yarn_parameters (transformers/modeling_rope_utils.py) written out here in double: the per-pair inverse
// frequencies and the attention factor; then a rotation by the scalar reference against the rotation those give.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "gguf/writer.h"
#include "kernels/backend.h"
#include "model/config.h"

namespace kairo::model {
namespace {

struct Yarn {
  double base = 1e6, factor = 4, beta_fast = 32, beta_slow = 1;
  int dim = 128, orig_ctx = 32768;
};

// Hugging Face: inv_freq = interpolation * (1 - extrapolation_factor) + extrapolation * extrapolation_factor,
// extrapolation_factor = 1 - linear_ramp(low, high) over the pair index, low/high from find_correction_range.
std::vector<double> hf_inv_freq(const Yarn& y) {
  auto correction_dim = [&](double n_rot) {
    return (y.dim * std::log(y.orig_ctx / (n_rot * 2 * M_PI))) / (2 * std::log(y.base));
  };
  double low = std::max(std::floor(correction_dim(y.beta_fast)), 0.0);
  double high = std::min(std::ceil(correction_dim(y.beta_slow)), static_cast<double>(y.dim - 1));
  if (low == high) high += 0.001;
  std::vector<double> out;
  for (int i = 0; i < y.dim / 2; ++i) {
    const double extrapolation = 1.0 / std::pow(y.base, 2.0 * i / y.dim);
    const double interpolation = extrapolation / y.factor;
    const double ramp = std::clamp((i - low) / (high - low), 0.0, 1.0);
    const double extrapolation_factor = 1.0 - ramp;
    out.push_back(interpolation * (1 - extrapolation_factor) + extrapolation * extrapolation_factor);
  }
  return out;
}

Result<ModelConfig> config_with_yarn(const Yarn& y, const std::string& path) {
  gguf::Writer w;
  w.set("general.architecture", gguf::Value::string("qwen3"));
  w.set("qwen3.block_count", gguf::Value::u32(1));
  w.set("qwen3.embedding_length", gguf::Value::u32(256));
  w.set("qwen3.attention.head_count", gguf::Value::u32(2));
  w.set("qwen3.attention.key_length", gguf::Value::u32(static_cast<uint32_t>(y.dim)));
  w.set("qwen3.feed_forward_length", gguf::Value::u32(512));
  w.set("qwen3.context_length", gguf::Value::u32(static_cast<uint32_t>(y.orig_ctx * y.factor)));
  w.set("qwen3.rope.freq_base", gguf::Value::f32(static_cast<float>(y.base)));
  w.set("qwen3.rope.scaling.type", gguf::Value::string("yarn"));
  w.set("qwen3.rope.scaling.factor", gguf::Value::f32(static_cast<float>(y.factor)));
  w.set("qwen3.rope.scaling.original_context_length", gguf::Value::u32(static_cast<uint32_t>(y.orig_ctx)));
  w.add_tensor("token_embd.weight", DType::F32, {256, 4}, std::vector<uint8_t>(256 * 4 * 4, 0));
  if (Status s = w.write(path); !s) return s.error();
  KAIRO_TRY_ASSIGN(const gguf::File f, gguf::File::open(path));
  return read_config(f);
}

TEST(Yarn, FrequenciesAndAttentionFactorMatchHuggingFace) {
  const std::string path = (std::filesystem::temp_directory_path() / "kairo_yarn_test.gguf").string();
  for (const Yarn& y : {Yarn{}, Yarn{1e4, 32, 32, 1, 64, 4096}, Yarn{5e5, 8, 32, 1, 128, 8192}}) {
    SCOPED_TRACE("factor " + std::to_string(y.factor) + " base " + std::to_string(y.base));
    auto c = config_with_yarn(y, path);
    ASSERT_TRUE(c.ok()) << c.error().message;
    ASSERT_EQ(c->yarn_freq_factors.size(), static_cast<size_t>(y.dim / 2));
    const std::vector<double> want = hf_inv_freq(y);
    int interpolated = 0, kept = 0;
    for (int i = 0; i < y.dim / 2; ++i) {
      // kairo's angle: pos * base^(-2i/d) / factor_i
      const double got = std::pow(static_cast<double>(c->rope.freq_base), -2.0 * i / y.dim) / c->yarn_freq_factors[i];
      EXPECT_NEAR(got / want[static_cast<size_t>(i)], 1.0, 2e-6) << "pair " << i;
      interpolated += c->yarn_freq_factors[i] > y.factor * 0.999;
      kept += c->yarn_freq_factors[i] == 1.0f;
    }
    EXPECT_GT(interpolated, 0);  // the ramp is inside the pairs: both ends occur
    EXPECT_GT(kept, 0);
    EXPECT_NEAR(c->rope.mscale, 0.1 * std::log(y.factor) + 1.0, 1e-6);

    // A rotation by the reference with these parameters = cos/sin of pos * inv_freq times the attention factor.
    kernels::RopeParams p = c->rope;
    p.n_heads = 1;
    p.freq_factors = c->yarn_freq_factors.data();
    std::vector<float> x(static_cast<size_t>(y.dim), 0.0f);
    for (int i = 0; i < y.dim / 2; ++i) x[static_cast<size_t>(i)] = 1.0f;  // NEOX: first half real, second imaginary
    const int32_t pos = 20000;
    kernels::reference_backend().rope(x.data(), &pos, 1, p);
    for (int i = 0; i < y.dim / 2; ++i) {
      const double theta = pos * want[static_cast<size_t>(i)];
      const double a = 0.1 * std::log(y.factor) + 1.0;
      EXPECT_NEAR(x[static_cast<size_t>(i)], std::cos(theta) * a, 2e-4) << "pair " << i;
      EXPECT_NEAR(x[static_cast<size_t>(i + y.dim / 2)], std::sin(theta) * a, 2e-4) << "pair " << i;
    }
  }
  std::filesystem::remove(path);
}

TEST(Yarn, BadParametersAreRefusedWithTheKeys) {
  const std::string path = (std::filesystem::temp_directory_path() / "kairo_yarn_bad.gguf").string();
  Yarn y;
  y.factor = 0.5;
  auto c = config_with_yarn(y, path);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.error().message.find("rope.scaling.factor in [1, 1024]"), std::string::npos) << c.error().message;
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace kairo::model
