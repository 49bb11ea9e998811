// `quantize_model`: byte-identical to llama-quantize on the shared files, and round trips within each type's error.
#include "convert/quantize_model.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <fstream>
#include <iterator>

#include "convert/convert_test_util.h"
#include "gguf/gguf_file.h"
#include "tensor/dequant.h"
#include "test_paths.h"

namespace kairo::convert {
namespace {

using testing::read_all;
using testing::temp_path;

Result<QuantizeReport> quantize(const std::string& in, const std::string& out, const std::string& scheme,
                                bool requantize = false) {
  ThreadPool pool(2);
  QuantizeOptions o;
  o.scheme = *parse_quant_scheme(scheme);
  o.allow_requantize = requantize;
  return quantize_model(in, out, o, pool);
}

struct Case {
  const char* model;
  const char* scheme;
};

class ReproducesLlamaQuantize : public ::testing::TestWithParam<Case> {};

TEST_P(ReproducesLlamaQuantize, ByteForByte) {
  const Case c = GetParam();
  const std::string in = kairo::testing::shared_path(std::string("models/") + c.model + ".f16.gguf");
  const std::string ref = kairo::testing::shared_path(std::string("models/") + c.model + "." + c.scheme + ".gguf");
  const std::string out = temp_path(std::string(c.model) + "." + c.scheme + ".gguf");
  auto report = quantize(in, out, c.scheme);
  ASSERT_TRUE(report.ok()) << report.error().message;
  const auto got = read_all(out);
  const auto want = read_all(ref);
  EXPECT_EQ(got.size(), want.size());
  EXPECT_TRUE(got == want) << "the file differs from llama-quantize's " << ref;
  EXPECT_EQ(report->out_bytes, want.size());
  std::remove(out.c_str());
}

INSTANTIATE_TEST_SUITE_P(Shared, ReproducesLlamaQuantize,
                         ::testing::Values(Case{"synth-llama-gqa", "Q4_K_M"}, Case{"synth-llama-gqa", "Q4_0"},
                                           Case{"synth-llama-gqa", "Q8_0"}, Case{"synth-llama-gqa", "Q6_K"},
                                           Case{"synth-qwen2", "Q4_K_M"}, Case{"synth-qwen2", "Q8_0"}),
                         [](const auto& info) {
                           return std::string(info.param.model == std::string("synth-qwen2") ? "qwen2_" : "llama_") +
                                  info.param.scheme;
                         });

// Every quantized tensor, dequantized by the reference dequantizer, stays within the type's error of the source.
class RoundTrip : public ::testing::TestWithParam<const char*> {};

TEST_P(RoundTrip, WithinTheTypesError) {
  const std::string in = kairo::testing::shared_path("models/synth-llama-gqa.f16.gguf");
  const std::string out = temp_path(std::string("rt.") + GetParam() + ".gguf");
  ThreadPool pool(2);
  QuantizeOptions o;
  o.scheme = *parse_quant_scheme(GetParam());
  o.pure = true;  // every matrix in the named type
  auto report = quantize_model(in, out, o, pool);
  ASSERT_TRUE(report.ok()) << report.error().message;
  auto src = gguf::File::open(in);
  auto dst = gguf::File::open(out);
  ASSERT_TRUE(src.ok() && dst.ok());
  // Relative RMS error bounds of the reference quantizers on Gaussian data (llama.cpp's test-quantize-fns uses
  // similar per-type thresholds); F16/BF16 are exact conversions of the f16 source's values.
  const std::map<std::string, double> bound = {{"Q8_0", 0.006}, {"Q6_K", 0.02}, {"Q5_K_M", 0.05}, {"Q5_0", 0.06},
                                               {"Q5_1", 0.05},  {"Q4_K_M", 0.10}, {"Q4_0", 0.12}, {"Q4_1", 0.10},
                                               {"F16", 0.0},    {"BF16", 0.004}};
  int n_checked = 0;
  for (const auto& t : src->tensors()) {
    const gguf::TensorInfo* q = dst->find_tensor(t.name);
    ASSERT_NE(q, nullptr);
    const int64_t n = t.n_elements();
    std::vector<float> a(static_cast<size_t>(n)), b(static_cast<size_t>(n));
    dequantize_row(t.type, t.data, a.data(), n);
    dequantize_row(q->type, q->data, b.data(), n);
    double err = 0, ref = 0;
    for (int64_t i = 0; i < n; ++i) {
      err += (a[i] - b[i]) * double(a[i] - b[i]);
      ref += a[i] * double(a[i]);
    }
    if (t.dims.size() == 1) {
      EXPECT_EQ(q->type, DType::F32);
      EXPECT_EQ(err, 0.0) << t.name;
      continue;
    }
    EXPECT_EQ(q->type, o.scheme.base) << t.name;
    EXPECT_LE(std::sqrt(err / ref), bound.at(GetParam())) << t.name;
    ++n_checked;
  }
  EXPECT_EQ(n_checked, 16);  // 7 matrices x 2 layers + embedding + output
  std::remove(out.c_str());
}

INSTANTIATE_TEST_SUITE_P(Types, RoundTrip,
                         ::testing::Values("F16", "BF16", "Q8_0", "Q6_K", "Q5_K_M", "Q5_0", "Q5_1", "Q4_K_M", "Q4_0",
                                           "Q4_1"));

TEST(QuantizeModel, SetsFileTypeLastAndKeepsEveryOtherKey) {
  const std::string in = kairo::testing::shared_path("models/synth-llama-gqa.f16.gguf");
  const std::string out = temp_path("meta.gguf");
  ASSERT_TRUE(quantize(in, out, "Q5_K_M").ok());
  auto src = gguf::File::open(in);
  auto dst = gguf::File::open(out);
  ASSERT_TRUE(dst.ok());
  EXPECT_EQ(dst->metadata().back().first, "general.file_type");
  EXPECT_EQ(*dst->get_uint("general.file_type"), 17u);
  EXPECT_EQ(*dst->get_uint("general.quantization_version"), 2u);
  EXPECT_EQ(dst->metadata().size(), src->metadata().size() + 1);
  for (const auto& [key, value] : src->metadata()) {
    ASSERT_NE(dst->find(key), nullptr) << key;
    if (key != "general.file_type") {
      EXPECT_EQ(dst->find(key)->to_display(1 << 20), value.to_display(1 << 20)) << key;
    }
  }
  std::remove(out.c_str());
}

TEST(QuantizeModel, RefusesQuantizedInputUnlessAllowed) {
  const std::string in = kairo::testing::shared_path("models/synth-llama-gqa.Q8_0.gguf");
  const std::string out = temp_path("requant.gguf");
  auto r = quantize(in, out, "Q4_0");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("is already quantized (Q8_0)"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("--allow-requantize"), std::string::npos);
  EXPECT_FALSE(std::ifstream(out).good());
  EXPECT_FALSE(std::ifstream(out + ".tmp").good());
  auto ok = quantize(in, out, "Q4_0", /*requantize=*/true);
  ASSERT_TRUE(ok.ok()) << ok.error().message;
  auto f = gguf::File::open(out);
  EXPECT_EQ(f->find_tensor("blk.0.attn_q.weight")->type, DType::Q4_0);
  std::remove(out.c_str());
}

TEST(QuantizeModel, ErrorsNameTheProblem) {
  const std::string in = kairo::testing::shared_path("models/synth-llama-gqa.f16.gguf");
  auto same = quantize(in, in, "Q8_0");
  ASSERT_FALSE(same.ok());
  EXPECT_NE(same.error().message.find("is the input"), std::string::npos);
  auto missing = quantize(temp_path("does-not-exist.gguf"), temp_path("x.gguf"), "Q8_0");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("does-not-exist.gguf"), std::string::npos);
}

}  // namespace
}  // namespace kairo::convert
