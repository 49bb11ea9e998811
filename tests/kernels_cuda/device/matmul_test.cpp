// The CUDA matmul (GEMV for few tokens, cuBLAS GEMM beyond) against the reference backend, every weight type,
// token counts on both sides of the path switch, shapes with ragged row counts.
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "device_test_util.h"
#include "kernels/cuda/cuda_backend.h"
#include "kernels/cuda/cuda_weights.h"
#include "kernels/ref/ref_ops.h"

namespace kairo::kernels::cuda {
namespace {

using namespace testing;

struct Case {
  DType type;
  int64_t n_rows, n_cols, n_tokens;
};

class CudaMatmulTest : public ::testing::TestWithParam<Case> {};

TEST_P(CudaMatmulTest, MatchesReference) {
  const Case c = GetParam();
  std::mt19937 rng(42);
  const size_t rb = row_bytes(c.type, c.n_cols);
  std::vector<uint8_t> w(rb * c.n_rows);
  for (int64_t r = 0; r < c.n_rows; ++r) kernels::testing::random_row(rng, c.type, c.n_cols, w.data() + r * rb);
  const MatrixView host{c.type, w.data(), c.n_rows, c.n_cols, rb};
  const std::vector<float> x = random_floats(rng, static_cast<size_t>(c.n_tokens * c.n_cols));

  ThreadPool pool(1);
  std::vector<float> want(static_cast<size_t>(c.n_tokens * c.n_rows));
  ref::matmul(host, x.data(), want.data(), c.n_tokens, pool);

  Result<PackedMatrix> dev = upload_matrix(host);
  ASSERT_TRUE(dev.ok()) << dev.error().message;
  DeviceBuffer dx = to_device(x);
  DeviceBuffer dy(want.size() * sizeof(float));
  cuda_backend().matmul(dev->view, dx.as<float>(), dy.as<float>(), c.n_tokens, pool);
  const Diff d = compare(to_host<float>(dy, want.size()), want);
  // GEMV accumulates in f32 (error ~1e-6); the GEMM path rounds activations to f16 (~1e-3) or bf16 (~8e-3).
  const bool gemm = c.n_tokens > kGemvMaxTokens;
  const double tol = !gemm ? 1e-5 : (c.type == DType::BF16 ? 1e-2 : (c.type == DType::F32 ? 1e-5 : 2e-3));
  EXPECT_LT(rel_rms(d), tol) << describe(d);
  EXPECT_GT(d.cosine, 1.0 - tol) << describe(d);
}

std::vector<Case> cases() {
  std::vector<Case> v;
  for (DType t : {DType::F32, DType::F16, DType::BF16, DType::Q8_0, DType::Q4_0, DType::Q4_K, DType::Q5_K,
                  DType::Q6_K}) {
    for (int64_t n : {1, 2, 3, 8, 16, 17, 64}) v.push_back({t, 131, 512, n});
    v.push_back({t, 1000, 4096, 1});   // a row count that is no multiple of the block's rows
    v.push_back({t, 64, 14336, 1});    // a down projection's width: 56 KiB of activations per token
  }
  v.push_back({DType::F16, 40, 200, 1});   // 200 columns: a padded last chunk
  v.push_back({DType::F16, 40, 200, 20});
  return v;
}

INSTANTIATE_TEST_SUITE_P(All, CudaMatmulTest, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case>& i) {
                           return std::string(dtype_name(i.param.type)) + "_" + std::to_string(i.param.n_rows) + "x" +
                                  std::to_string(i.param.n_cols) + "_t" + std::to_string(i.param.n_tokens);
                         });

TEST(CudaWeights, TiedTensorsUploadOnceAndVectorsRoundTrip) {
  std::vector<uint16_t> w(64 * 32, 0x3c00);  // f16 ones
  const MatrixView host{DType::F16, w.data(), 64, 32, 64};
  CudaWeights weights;
  Result<MatrixView> a = weights.upload(host);
  Result<MatrixView> b = weights.upload(host);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->data, b->data);
  EXPECT_EQ(a->packing, kCudaPacking);
  const std::vector<float> norm = {1.0f, 2.0f, 3.0f};
  Result<const float*> dn = weights.upload(norm.data(), 3);
  ASSERT_TRUE(dn.ok());
  std::vector<float> back(3);
  CUDA_CHECK(cudaMemcpy(back.data(), *dn, 12, cudaMemcpyDeviceToHost));
  EXPECT_EQ(back, norm);
  EXPECT_EQ(weights.find(norm.data()), *dn);
}

TEST(CudaWeights, UnsupportedTypeIsAnError) {
  std::vector<uint8_t> w(176 * 2);
  const MatrixView host{DType::Q5_0, w.data(), 2, 256, 176};
  const Result<PackedMatrix> m = upload_matrix(host);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.error().message.find("Q5_0 is not supported by the CUDA backend"), std::string::npos);
}

}  // namespace
}  // namespace kairo::kernels::cuda
