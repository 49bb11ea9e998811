// Cross-check against llama.cpp on real files: the synthetic models in ../shared/models hold the same random weights
// as F16 and as quantized by llama.cpp's llama-quantize (no importance matrix). Our dequantization of each quantized
// tensor must be close to the F16 original, and our reference quantizer, fed the F16 weights, must reproduce
// llama.cpp's bytes exactly.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "gguf/gguf_file.h"
#include "tensor/dequant.h"
#include "tensor/quantize.h"
#include "test_paths.h"

namespace kairo {
namespace {

// Relative RMS error bounds against the F16 weights (measured: Q8_0 0.0054, Q6_K 0.018, Q4_K 0.072, Q4_0 0.087).
double error_bound(DType t) {
  switch (t) {
    case DType::Q8_0: return 0.0068;
    case DType::Q6_K: return 0.022;
    case DType::Q4_K: return 0.08;
    case DType::Q4_0: return 0.095;
    default: return 0.0;  // other types are stored unchanged (F32 norms)
  }
}

std::vector<float> dequantize_tensor(const gguf::TensorInfo& t) {
  std::vector<float> out(static_cast<size_t>(t.n_elements()));
  dequantize_row(t.type, t.data, out.data(), t.n_elements());
  return out;
}

class GgufCrossCheck : public ::testing::TestWithParam<std::string> {};

TEST_P(GgufCrossCheck, MatchesLlamaCpp) {
  const std::string model = GetParam();
  const std::string f16_path = kairo::testing::shared_path("models/synth-" + model + ".f16.gguf");
  Result<gguf::File> f16 = gguf::File::open(f16_path);
  ASSERT_TRUE(f16.ok()) << f16.error().message;

  std::set<DType> types_seen;
  for (const char* variant : {"Q8_0", "Q4_0", "Q4_K_M", "Q6_K"}) {
    const std::string path = kairo::testing::shared_path("models/synth-" + model + "." + variant + ".gguf");
    Result<gguf::File> quant = gguf::File::open(path);
    ASSERT_TRUE(quant.ok()) << quant.error().message;
    ASSERT_EQ(quant->tensors().size(), f16->tensors().size()) << path;
    for (const gguf::TensorInfo& t : quant->tensors()) {
      SCOPED_TRACE(std::string(variant) + " " + t.name + " (" + std::string(dtype_name(t.type)) + ")");
      const gguf::TensorInfo* ref = f16->find_tensor(t.name);
      ASSERT_NE(ref, nullptr);
      ASSERT_EQ(ref->dims, t.dims);
      types_seen.insert(t.type);

      const std::vector<float> want = dequantize_tensor(*ref);
      const std::vector<float> got = dequantize_tensor(t);
      double err = 0, norm = 0;
      for (size_t i = 0; i < want.size(); ++i) {
        err += (static_cast<double>(want[i]) - got[i]) * (static_cast<double>(want[i]) - got[i]);
        norm += static_cast<double>(want[i]) * want[i];
      }
      if (t.type == ref->type) {
        EXPECT_EQ(got, want);
        continue;
      }
      EXPECT_LT(std::sqrt(err / norm), error_bound(t.type));

      ASSERT_TRUE(can_quantize_to(t.type));
      const int64_t row = t.dims[0];
      const size_t rb = row_bytes(t.type, row);
      std::vector<uint8_t> mine(static_cast<size_t>(t.n_rows()) * rb);
      for (int64_t r = 0; r < t.n_rows(); ++r) {
        quantize_row(t.type, want.data() + r * row, mine.data() + r * rb, row);
      }
      ASSERT_EQ(mine.size(), t.n_bytes);
      int64_t rows_differing = 0;
      for (int64_t r = 0; r < t.n_rows(); ++r) {
        rows_differing += std::memcmp(mine.data() + r * rb, t.data + r * rb, rb) != 0;
      }
      EXPECT_EQ(rows_differing, 0) << "of " << t.n_rows() << " rows";
    }
  }
  for (DType t : {DType::Q8_0, DType::Q4_0, DType::Q4_K, DType::Q6_K}) {
    EXPECT_TRUE(types_seen.count(t)) << dtype_name(t) << " not covered by the files";
  }
}

INSTANTIATE_TEST_SUITE_P(SynthModels, GgufCrossCheck, ::testing::Values("llama-gqa", "qwen2"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string name = info.param;
                           for (char& c : name) c = (c == '-') ? '_' : c;
                           return name;
                         });

}  // namespace
}  // namespace kairo

namespace kairo {
namespace {

// MXFP4 against llama.cpp's file: synth-gpt-oss.MXFP4_MOE.gguf holds the expert stacks of synth-gpt-oss.f16.gguf
// as ggml's reference quantizer wrote them. Our quantizer fed the F16 weights must give the same bytes, and our
// dequantization must stay near the F16 values (E2M1 has 1 mantissa bit: measured relative RMS error 0.115-0.118).
TEST(GgufCrossCheckMxfp4, ExpertStacksMatchLlamaCppBytes) {
  Result<gguf::File> f16 = gguf::File::open(kairo::testing::shared_path("models/synth-gpt-oss.f16.gguf"));
  Result<gguf::File> mx = gguf::File::open(kairo::testing::shared_path("models/synth-gpt-oss.MXFP4_MOE.gguf"));
  ASSERT_TRUE(f16.ok() && mx.ok());
  int n_mxfp4 = 0;
  for (const gguf::TensorInfo& t : mx->tensors()) {
    if (t.type != DType::MXFP4) continue;
    ++n_mxfp4;
    SCOPED_TRACE(t.name);
    const gguf::TensorInfo* ref = f16->find_tensor(t.name);
    ASSERT_NE(ref, nullptr);
    const std::vector<float> want = dequantize_tensor(*ref);
    const std::vector<float> got = dequantize_tensor(t);
    double err = 0, norm = 0;
    for (size_t i = 0; i < want.size(); ++i) {
      err += (static_cast<double>(want[i]) - got[i]) * (static_cast<double>(want[i]) - got[i]);
      norm += static_cast<double>(want[i]) * want[i];
    }
    std::printf("%s: MXFP4 relative RMS error %.4f\n", t.name.c_str(), std::sqrt(err / norm));
    EXPECT_LT(std::sqrt(err / norm), 0.2);
    std::vector<uint8_t> mine(t.n_bytes);
    quantize_row(DType::MXFP4, want.data(), mine.data(), t.n_elements());
    int64_t blocks_differing = 0;
    for (size_t b = 0; b < mine.size() / 17; ++b) blocks_differing += std::memcmp(&mine[17 * b], t.data + 17 * b, 17) != 0;
    EXPECT_EQ(blocks_differing, 0) << "of " << mine.size() / 17 << " blocks";
  }
  EXPECT_EQ(n_mxfp4, 6);
}

}  // namespace
}  // namespace kairo
