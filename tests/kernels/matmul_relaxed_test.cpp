// Numerics::Relaxed matmuls (Backend::matmul_relaxed: AMX bf16 tiles for row-tile-packed Q4_0/Q8_0/Q4_K/Q6_K and
// F16/BF16/F32 weights times many tokens) against the scalar reference, on every ISA (those without a relaxed path must give their exact
// results), over awkward shapes: partial and odd row tiles, odd block counts, token counts with a partial last
// tile, one-token-tile groups and more token tiles than fit one L2 group.
//
// Tolerance. The relaxed path rounds each activation and each dequantized weight (q * d) to bf16 (relative error at
// most 2^-9 each) and sums in f32, so an output's error is at most 2^-8 (+ f32 rounding) times sum |x| |w| over its
// row: checked per output with 2^-7 (the f32 sums of a few thousand terms add well under 2^-8 relative to that sum).
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "core/thread_pool.h"
#include "kernel_test_util.h"
#include "tensor/dequant.h"

namespace kairo::kernels {
namespace {

// Per output: sum over the row of |x| |w|.
std::vector<double> abs_products(const MatrixView& w, const std::vector<float>& x, int64_t n_tokens) {
  std::vector<double> out(static_cast<size_t>(n_tokens * w.n_rows));
  std::vector<float> row(static_cast<size_t>(w.n_cols));
  for (int64_t r = 0; r < w.n_rows; ++r) {
    dequantize_row(w.dtype, static_cast<const uint8_t*>(w.data) + r * w.row_bytes, row.data(), w.n_cols);
    for (int64_t t = 0; t < n_tokens; ++t) {
      double s = 0;
      for (int64_t c = 0; c < w.n_cols; ++c) s += std::fabs(static_cast<double>(x[t * w.n_cols + c]) * row[c]);
      out[t * w.n_rows + r] = s;
    }
  }
  return out;
}

struct RelaxedCase {
  DType type;
  int64_t rows, cols, tokens;
};

class MatmulRelaxedTest : public ::testing::TestWithParam<RelaxedCase> {};

TEST_P(MatmulRelaxedTest, WithinBf16RoundingOfTheReferenceOnEveryIsa) {
  const RelaxedCase c = GetParam();
  std::mt19937 rng(11);
  testing::RandomWeight w = testing::random_weight(rng, c.type, c.rows, c.cols);
  const std::vector<float> x = testing::random_floats(rng, static_cast<size_t>(c.tokens * c.cols));
  std::vector<float> ref(static_cast<size_t>(c.tokens * c.rows));
  ThreadPool pool(2);
  reference_backend().matmul(w.view, x.data(), ref.data(), c.tokens, pool);
  const std::vector<double> bound = abs_products(w.view, x, c.tokens);
  int checked = 0;
  for (cpu::Isa isa : testing::optimized_isas()) {
    const Backend* be = cpu::cpu_backend(isa);
    if (be == nullptr) continue;
    SCOPED_TRACE(cpu::isa_name(isa));
    const MatrixView v = w.for_backend(*be);
    std::vector<float> relaxed(ref.size(), -1.0f), exact(ref.size(), -2.0f);
    matmul(*be, v, x.data(), relaxed.data(), c.tokens, pool, Numerics::Relaxed);
    be->matmul(v, x.data(), exact.data(), c.tokens, pool);
    int bad = 0;
    for (size_t i = 0; i < ref.size() && bad < 5; ++i) {
      const double err = std::fabs(static_cast<double>(relaxed[i]) - ref[i]);
      if (!(err <= bound[i] / 128.0)) {
        ADD_FAILURE() << "output " << i << ": relaxed " << relaxed[i] << " reference " << ref[i] << " bound "
                      << bound[i] / 128.0;
        ++bad;
      }
    }
    EXPECT_GE(testing::compare(relaxed, ref).cosine, 0.9999);
    const bool same = std::memcmp(relaxed.data(), exact.data(), relaxed.size() * sizeof(float)) == 0;
    if (be->matmul_relaxed == nullptr) {
      EXPECT_TRUE(same) << "no relaxed path: the exact results, bit for bit";
    } else if (c.type != DType::Q5_K && c.tokens > 16) {
      EXPECT_FALSE(same) << "the bf16 path was not taken";
    }
    ++checked;
  }
  EXPECT_GT(checked, 0);
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, MatmulRelaxedTest,
    ::testing::Values(RelaxedCase{DType::Q4_0, 37, 544,
                                  17},  // partial row tile, 3 row tiles (one unpaired), 1-token tile
                      RelaxedCase{DType::Q4_0, 80, 544, 33},    // 5 row tiles, 3 token tiles (one unpaired)
                      RelaxedCase{DType::Q8_0, 48, 4096, 150},  // 10 token tiles: more than one L2 group of 8
                      RelaxedCase{DType::Q8_0, 19, 96, 64},     // one partial row tile, 3 blocks
                      RelaxedCase{DType::Q4_0, 16, 64, 5},      // few tokens: the exact path
                      RelaxedCase{DType::Q4_K, 21, 512, 40},    // scales and mins folded in, 2 super-blocks
                      RelaxedCase{DType::Q6_K, 37, 768, 33},    // two scales per 32-column block, 3 super-blocks
                      RelaxedCase{DType::F16, 37, 96, 40},      // float rows (GGUF layout), partial row tile
                      RelaxedCase{DType::BF16, 32, 64, 17}, RelaxedCase{DType::F32, 21, 128, 33},
                      RelaxedCase{DType::Q5_K, 21, 512, 40}),  // no relaxed kernel for this type: exact
    [](const ::testing::TestParamInfo<RelaxedCase>& info) {
      return std::string(dtype_name(info.param.type)) + "_" + std::to_string(info.param.rows) + "x" +
             std::to_string(info.param.cols) + "_t" + std::to_string(info.param.tokens);
    });

// Fused Q/K/V under Relaxed: bit for bit the relaxed matmul of each weight alone (the row tiles' arithmetic does not
// depend on which thread or which fused set computes them); and a token count the relaxed path leaves to the exact
// kernels gives exactly the exact results.
TEST(MatmulRelaxed, SharedInputEqualsSeparateRelaxedMatmulsAndFewTokensStayExact) {
  std::mt19937 rng(5);
  ThreadPool pool(2);
  std::vector<testing::RandomWeight> weights;
  weights.push_back(testing::random_weight(rng, DType::Q4_0, 64, 256));
  weights.push_back(testing::random_weight(rng, DType::Q4_0, 21, 256));
  weights.push_back(testing::random_weight(rng, DType::Q8_0, 40, 256));
  weights.push_back(testing::random_weight(rng, DType::Q6_K, 24, 256));
  const std::vector<float> x = testing::random_floats(rng, static_cast<size_t>(48 * 256));
  for (cpu::Isa isa : testing::optimized_isas()) {
    const Backend* be = cpu::cpu_backend(isa);
    if (be == nullptr) continue;
    for (int64_t n_tokens : {int64_t{4}, int64_t{16}, int64_t{48}}) {
      SCOPED_TRACE(std::string(cpu::isa_name(isa)) + " n_tokens=" + std::to_string(n_tokens));
      std::vector<MatrixView> views;
      for (auto& w : weights) views.push_back(w.for_backend(*be));
      std::vector<std::vector<float>> fused(views.size()), alone(views.size()), exact(views.size());
      std::vector<float*> outs;
      for (size_t i = 0; i < views.size(); ++i) {
        const size_t n = static_cast<size_t>(n_tokens * views[i].n_rows);
        fused[i].assign(n, -1.0f);
        alone[i].assign(n, -2.0f);
        exact[i].assign(n, -3.0f);
        outs.push_back(fused[i].data());
        matmul(*be, views[i], x.data(), alone[i].data(), n_tokens, pool, Numerics::Relaxed);
        be->matmul(views[i], x.data(), exact[i].data(), n_tokens, pool);
      }
      matmul_shared_input(*be, views.data(), static_cast<int>(views.size()), x.data(), outs.data(), n_tokens, pool,
                          Numerics::Relaxed);
      for (size_t i = 0; i < views.size(); ++i) {
        EXPECT_EQ(std::memcmp(fused[i].data(), alone[i].data(), fused[i].size() * sizeof(float)), 0) << "weight " << i;
        if (n_tokens <= 16) {
          EXPECT_EQ(std::memcmp(fused[i].data(), exact[i].data(), fused[i].size() * sizeof(float)), 0)
              << "weight " << i;
        }
      }
    }
  }
}

}  // namespace
}  // namespace kairo::kernels
