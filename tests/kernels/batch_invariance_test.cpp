// Deterministic mode (issue 5): a token's matmul outputs must not depend on what else is in the batch. For every
// weight type, ISA path and weight layout, each row of y computed with n_tokens = N (whatever the token's position
// in the batch and in its 16-token tile) must equal, bit for bit, y computed for that token alone (n_tokens = 1,
// the GEMV path). Activations are random floats at several scales, with some all-zero blocks (scale 0).
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "core/thread_pool.h"
#include "kernel_test_util.h"

namespace kairo::kernels {
namespace {

struct InvarianceShape {
  int64_t rows;
  int64_t cols;
};

// Row counts around the 4- and 16-row groups, and 181 / 224 rows (12 / 14 row tiles: each thread's share runs
// through the GEMV's 4-, 2- and 1-tile groups); column counts whose block counts are not multiples of 16.
std::vector<InvarianceShape> invariance_shapes_for(DType t) {
  const int64_t block = dtype_info(t).block_size;
  if (block == 256) return {{37, 768}, {16, 1280}, {181, 512}, {224, 256}};
  if (block == 32) return {{37, 544}, {19, 2080}, {181, 544}, {224, 96}};
  // Float rows: 66001 columns make the GEMM split the tokens into L2-sized blocks of 4 (and leave a column tail).
  return {{37, 300}, {18, 64}, {6, 66001}};
}

std::vector<float> activations(std::mt19937& rng, int64_t n_tokens, int64_t n_cols) {
  std::vector<float> x = testing::random_floats(rng, static_cast<size_t>(n_tokens * n_cols));
  std::uniform_real_distribution<float> scale(0.01f, 30.0f);
  for (int64_t t = 0; t < n_tokens; ++t) {
    const float s = scale(rng);
    for (int64_t c = 0; c < n_cols; ++c) x[t * n_cols + c] *= s;
  }
  if (n_cols >= 64)
    for (int64_t t = 0; t < n_tokens; t += 3) std::memset(&x[t * n_cols + 32], 0, 32 * sizeof(float));
  return x;
}

class BatchInvarianceTest : public ::testing::TestWithParam<DType> {};

TEST_P(BatchInvarianceTest, EveryTokenOfABatchEqualsThatTokenAloneBitForBit) {
  const DType type = GetParam();
  std::mt19937 rng(99 + static_cast<int>(type));
  ThreadPool pool(2);
  constexpr int64_t kMaxTokens = 33;
  int checked_paths = 0;
  for (const InvarianceShape& s : invariance_shapes_for(type)) {
    const size_t rb = row_bytes(type, s.cols);
    std::vector<uint8_t> wdata(rb * static_cast<size_t>(s.rows));
    for (int64_t r = 0; r < s.rows; ++r) testing::random_row(rng, type, s.cols, wdata.data() + r * rb);
    const MatrixView w{type, wdata.data(), s.rows, s.cols, rb};
    const std::vector<float> x = activations(rng, kMaxTokens, s.cols);
    for (cpu::Isa isa : testing::optimized_isas()) {
      const Backend* be = cpu::cpu_backend(isa);
      if (be == nullptr) continue;  // this CPU lacks the ISA
      std::vector<MatrixView> views = {w};
      PackedMatrix packed;
      if (be->pack_weights != nullptr) packed = be->pack_weights(w);
      if (packed.view.data != nullptr) views.push_back(packed.view);
      for (const MatrixView& view : views) {
        SCOPED_TRACE(std::string(cpu::isa_name(isa)) + " " + std::string(dtype_name(type)) +
                     (view.packing != 0 ? " packed" : " gguf") + " rows=" + std::to_string(s.rows) +
                     " cols=" + std::to_string(s.cols));
        // Each token alone.
        std::vector<float> alone(static_cast<size_t>(kMaxTokens * s.rows));
        for (int64_t t = 0; t < kMaxTokens; ++t)
          be->matmul(view, x.data() + t * s.cols, alone.data() + t * s.rows, 1, pool);
        for (int64_t n_tokens : {2, 5, 8, 11, 12, 15, 16, 17, 31, 33}) {
          // Tokens [first, first + n_tokens) so a token also lands at different positions within the batch.
          for (int64_t first : {int64_t{0}, kMaxTokens - n_tokens}) {
            std::vector<float> batch(static_cast<size_t>(n_tokens * s.rows), -1.0f);
            be->matmul(view, x.data() + first * s.cols, batch.data(), n_tokens, pool);
            for (int64_t t = 0; t < n_tokens; ++t) {
              const float* want = alone.data() + (first + t) * s.rows;
              const float* got = batch.data() + t * s.rows;
              if (std::memcmp(want, got, static_cast<size_t>(s.rows) * sizeof(float)) != 0) {
                int64_t r = 0;
                while (std::memcmp(want + r, got + r, sizeof(float)) == 0) ++r;
                ADD_FAILURE() << "n_tokens=" << n_tokens << " token " << first + t << " (position " << t
                              << "), row " << r << ": batched " << got[r] << " vs alone " << want[r];
                break;
              }
            }
          }
        }
        ++checked_paths;
      }
    }
  }
  EXPECT_GT(checked_paths, 0);
}

INSTANTIATE_TEST_SUITE_P(AllTypes, BatchInvarianceTest,
                         ::testing::Values(DType::F32, DType::F16, DType::BF16, DType::Q8_0, DType::Q4_0, DType::Q4_1,
                                           DType::Q5_0, DType::Q5_1, DType::Q4_K, DType::Q5_K, DType::Q6_K,
                                           DType::MXFP4),
                         [](const ::testing::TestParamInfo<DType>& info) {
                           return std::string(dtype_name(info.param));
                         });

}  // namespace
}  // namespace kairo::kernels
