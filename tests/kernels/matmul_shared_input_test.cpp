// Backend::matmul_shared_input (Q/K/V and gate/up read one input): every output must equal, bit for bit, what the
// backend's matmul gives that weight alone -- on every ISA, packed and not, for mixed weight types (a Q4_K_M model
// mixes Q4_K and Q6_K; a Q4_0 one pairs Q4_0 with others), odd row counts, and token counts on every path (GEMV,
// few-token GEMV, AMX tiles with a partial tile).
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "core/thread_pool.h"
#include "kernel_test_util.h"

namespace kairo::kernels {
namespace {

void expect_fused_equals_separate(const std::vector<DType>& types, const std::vector<int64_t>& rows, int64_t cols) {
  std::mt19937 rng(7);
  ThreadPool pool(2);
  std::vector<testing::RandomWeight> weights;
  for (size_t i = 0; i < types.size(); ++i) weights.push_back(testing::random_weight(rng, types[i], rows[i], cols));
  constexpr int64_t kMaxTokens = 37;
  const std::vector<float> x = testing::random_floats(rng, static_cast<size_t>(kMaxTokens * cols));
  int checked = 0;
  for (cpu::Isa isa : testing::optimized_isas()) {
    const Backend* be = cpu::cpu_backend(isa);
    if (be == nullptr) continue;
    std::vector<MatrixView> views;
    for (auto& w : weights) views.push_back(w.for_backend(*be));
    for (int64_t n_tokens : {int64_t{1}, int64_t{3}, int64_t{16}, kMaxTokens}) {
      SCOPED_TRACE(std::string(cpu::isa_name(isa)) + " n_tokens=" + std::to_string(n_tokens));
      std::vector<std::vector<float>> fused(views.size()), separate(views.size());
      std::vector<float*> outs;
      for (size_t i = 0; i < views.size(); ++i) {
        fused[i].assign(static_cast<size_t>(n_tokens * views[i].n_rows), -1.0f);
        separate[i].assign(fused[i].size(), -2.0f);
        outs.push_back(fused[i].data());
        be->matmul(views[i], x.data(), separate[i].data(), n_tokens, pool);
      }
      matmul_shared_input(*be, views.data(), static_cast<int>(views.size()), x.data(), outs.data(), n_tokens, pool);
      for (size_t i = 0; i < views.size(); ++i) {
        EXPECT_EQ(std::memcmp(fused[i].data(), separate[i].data(), fused[i].size() * sizeof(float)), 0)
            << "weight " << i << " (" << dtype_name(types[i]) << ")";
      }
      ++checked;
    }
  }
  EXPECT_GT(checked, 0);
}

TEST(MatmulSharedInput, QkvOfALegacyQuantModelEqualsSeparateMatmuls) {
  expect_fused_equals_separate({DType::Q4_0, DType::Q4_0, DType::Q8_0}, {80, 37, 19}, 544);
}

// gpt-oss's MXFP4_MOE files: MXFP4 experts next to Q8_0 matrices (gate and up of an expert read one input).
TEST(MatmulSharedInput, Mxfp4AndQ8_0EqualSeparateMatmuls) {
  expect_fused_equals_separate({DType::MXFP4, DType::MXFP4, DType::Q8_0}, {48, 37, 16}, 544);
}

TEST(MatmulSharedInput, MixedKQuantsEqualSeparateMatmuls) {
  expect_fused_equals_separate({DType::Q4_K, DType::Q6_K}, {48, 21}, 768);
}

TEST(MatmulSharedInput, FloatAndQuantMixEqualsSeparateMatmuls) {
  expect_fused_equals_separate({DType::F16, DType::Q4_0, DType::Q5_1}, {17, 33, 16}, 256);
}

}  // namespace
}  // namespace kairo::kernels
