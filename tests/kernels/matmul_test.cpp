// Every optimized matmul path against the reference, per weight type, over awkward shapes: row counts that are not
// multiples of the kernels' row groups (4, 16), column counts with odd block counts, and token counts around the
// 16-token GEMM tile (1 = GEMV, 3, 7, 17, 64).
//
// Tolerances. Float weights, and the AVX2 path (dequantize + f32 FMA) differ from the double-precision reference
// only by f32 rounding: max |err| <= 1e-4 * rms(ref). The AVX-512/AMX paths for quantized weights multiply int8
// activations: each activation is rounded to a multiple of its block's scale max|x|/127, an error of at most
// max|x|/254 per element. So each output's error is bounded by sum over blocks of (block max|x| / 254) times
// sum |w| over the block (plus f32 rounding); the test checks exactly that bound per output, and for shapes with
// many outputs also cosine >= 0.9999 (typical rms error is ~0.3% of the output rms). The same paths are also run on
// activations that int8 represents exactly (integers with +-127 in every block, so the scale is exactly 1); there
// any error beyond f32 rounding would be a kernel bug, and the tight bound applies.
#include <gtest/gtest.h>

#include <vector>

#include "core/thread_pool.h"
#include "kernel_test_util.h"
#include "tensor/dequant.h"

namespace kairo::kernels {
namespace {

using testing::compare;
using testing::describe;
using testing::Diff;

bool is_float(DType t) { return t == DType::F32 || t == DType::F16 || t == DType::BF16; }

std::vector<float> exact_int8_activations(std::mt19937& rng, int64_t n_tokens, int64_t n_cols) {
  std::uniform_int_distribution<int> val(-127, 127);
  std::vector<float> x(static_cast<size_t>(n_tokens * n_cols));
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 32 == 0 ? (val(rng) < 0 ? -127 : 127) : val(rng));
  return x;
}

// Per output: sum over blocks of (max|x| over the block / 254) * sum |w| over the block.
std::vector<float> int8_rounding_bound(const MatrixView& w, const std::vector<float>& x, int64_t n_tokens) {
  std::vector<float> bound(static_cast<size_t>(n_tokens * w.n_rows));
  std::vector<float> row(static_cast<size_t>(w.n_cols));
  for (int64_t r = 0; r < w.n_rows; ++r) {
    dequantize_row(w.dtype, static_cast<const uint8_t*>(w.data) + r * w.row_bytes, row.data(), w.n_cols);
    for (int64_t t = 0; t < n_tokens; ++t) {
      double b = 0;
      for (int64_t c0 = 0; c0 < w.n_cols; c0 += 32) {
        double amax = 0, wsum = 0;
        for (int64_t c = c0; c < c0 + 32; ++c) {
          amax = std::max(amax, static_cast<double>(std::fabs(x[t * w.n_cols + c])));
          wsum += std::fabs(row[c]);
        }
        b += amax / 254.0 * wsum;
      }
      bound[t * w.n_rows + r] = static_cast<float>(b);
    }
  }
  return bound;
}

struct MatmulShape {
  int64_t rows;
  int64_t cols;
};

std::vector<MatmulShape> matmul_shapes_for(DType t) {
  const int64_t block = dtype_info(t).block_size;
  if (block == 256) return {{1, 256}, {5, 768}, {17, 1280}, {33, 512}, {117, 256}};
  if (block == 32) return {{1, 32}, {5, 96}, {17, 544}, {33, 2080}, {117, 96}};
  return {{1, 37}, {5, 256}, {17, 300}, {33, 64}};
}

class MatmulTest : public ::testing::TestWithParam<DType> {};

TEST_P(MatmulTest, MatchesReferenceOnEveryIsa) {
  const DType type = GetParam();
  std::mt19937 rng(1234 + static_cast<int>(type));
  ThreadPool pool(2);
  for (const MatmulShape& s : matmul_shapes_for(type)) {
    const size_t rb = row_bytes(type, s.cols);
    std::vector<uint8_t> wdata(rb * static_cast<size_t>(s.rows));
    for (int64_t r = 0; r < s.rows; ++r) testing::random_row(rng, type, s.cols, wdata.data() + r * rb);
    const MatrixView w{type, wdata.data(), s.rows, s.cols, rb};
    for (int64_t n_tokens : {1, 3, 7, 11, 17, 64}) {
      for (bool exact : {true, false}) {
        const std::vector<float> x =
            exact ? exact_int8_activations(rng, n_tokens, s.cols) : testing::random_floats(rng, n_tokens * s.cols);
        std::vector<float> ref(static_cast<size_t>(n_tokens * s.rows));
        reference_backend().matmul(w, x.data(), ref.data(), n_tokens, pool);
        for (cpu::Isa isa : testing::optimized_isas()) {
          const Backend* be = cpu::cpu_backend(isa);
          if (be == nullptr) continue;  // this CPU lacks the ISA
          SCOPED_TRACE(std::string(cpu::isa_name(isa)) + " " + std::string(dtype_name(type)) + " rows=" +
                       std::to_string(s.rows) + " cols=" + std::to_string(s.cols) + " tokens=" +
                       std::to_string(n_tokens) + (exact ? " exact-int8 activations" : " random activations"));
          // The GGUF layout, and the backend's load-time packed layout where it has one for this type.
          std::vector<MatrixView> views = {w};
          PackedMatrix packed;
          if (be->pack_weights != nullptr) packed = be->pack_weights(w);
          if (packed.view.data != nullptr) views.push_back(packed.view);
          for (const MatrixView& view : views) {
            SCOPED_TRACE(view.packing != 0 ? "packed layout" : "gguf layout");
            std::vector<float> got(ref.size(), -12345.0f);
            be->matmul(view, x.data(), got.data(), n_tokens, pool);
            const Diff d = compare(got, ref);
            // AVX2 and NEON quantize the activations only for their packed row tiles; GGUF rows go through the float
            // path.
            const bool row_tiles_only = isa == cpu::Isa::Avx2 || isa == cpu::Isa::Neon;
            const bool int8_path = !is_float(type) && (!row_tiles_only || view.packing != 0);
            if (!int8_path || exact) {
              EXPECT_LE(d.max_abs, 1e-4 * d.rms_ref + 1e-6) << describe(d);
            } else {
              const std::vector<float> bound = int8_rounding_bound(w, x, n_tokens);
              for (size_t i = 0; i < ref.size(); ++i) {
                ASSERT_LE(std::fabs(got[i] - ref[i]), bound[i] * 1.001 + 1e-4 * d.rms_ref) << "output " << i;
              }
              if (ref.size() >= 256) {
                EXPECT_GE(d.cosine, 0.9999) << describe(d);
              }
            }
          }
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllTypes, MatmulTest,
                         ::testing::Values(DType::F32, DType::F16, DType::BF16, DType::Q8_0, DType::Q4_0, DType::Q4_1,
                                           DType::Q5_0, DType::Q5_1, DType::Q4_K, DType::Q5_K, DType::Q6_K,
                                           DType::MXFP4),
                         [](const ::testing::TestParamInfo<DType>& info) {
                           return std::string(dtype_name(info.param));
                         });

// Which types get a packed layout is part of the contract with the model loader: Q4_0, Q8_0, MXFP4, Q4_K and Q6_K
// row tiles on the int8 paths; every other weight comes back as a byte-identical copy in the GGUF layout (packing 0, in
// huge-page memory).
TEST(MatmulPacking, RowTilesForQ4_0Q8_0MXFP4Q4_KQ6_KAndCopiesOtherwise) {
  for (cpu::Isa isa : testing::optimized_isas()) {
    const Backend* be = cpu::cpu_backend(isa);
    if (be == nullptr || be->pack_weights == nullptr) continue;
    for (DType t : {DType::F16, DType::Q4_0, DType::Q4_1, DType::Q8_0, DType::MXFP4, DType::Q4_K, DType::Q6_K}) {
      const int64_t cols = 512;
      std::vector<uint8_t> data(row_bytes(t, cols) * 3);
      for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>(i * 7);
      const MatrixView w{t, data.data(), 3, cols, row_bytes(t, cols)};
      const PackedMatrix p = be->pack_weights(w);
      SCOPED_TRACE(std::string(cpu::isa_name(isa)) + " " + std::string(dtype_name(t)));
      ASSERT_NE(p.view.data, nullptr);
      EXPECT_NE(p.view.data, w.data);
      EXPECT_EQ(reinterpret_cast<uintptr_t>(p.view.data) % 64, 0u);
      EXPECT_EQ(p.view.n_rows, 3);
      EXPECT_EQ(p.view.n_cols, cols);
      EXPECT_EQ(p.view.dtype, t);
      // Row tiles hold the GGUF bytes of their 16 rows (Q4_K: 148 instead of 144 per super-block, its 6-bit scales
      // stored as bytes), and row_bytes is a tile's bytes / 16.
      EXPECT_EQ(p.view.row_bytes, t == DType::Q4_K ? row_bytes(t, cols) / 144 * 148 : row_bytes(t, cols));
      const bool packed =
          t == DType::Q4_0 || t == DType::Q8_0 || t == DType::MXFP4 || t == DType::Q4_K || t == DType::Q6_K;
      EXPECT_EQ(p.view.packing != 0, packed);
      if (!packed) {
        EXPECT_EQ(std::memcmp(p.view.data, w.data, data.size()), 0);
      }
    }
  }
}

// A single thread must give the same numbers as two (work is split by rows, never by the reduction).
TEST(MatmulThreads, OneAndTwoThreadsAgreeExactly) {
  std::mt19937 rng(7);
  const DType type = DType::Q4_K;
  const int64_t rows = 37, cols = 512;
  const size_t rb = row_bytes(type, cols);
  std::vector<uint8_t> wdata(rb * rows);
  for (int64_t r = 0; r < rows; ++r) testing::random_row(rng, type, cols, wdata.data() + r * rb);
  const MatrixView w{type, wdata.data(), rows, cols, rb};
  ThreadPool one(1), two(2);
  for (int64_t n_tokens : {1, 20}) {
    const std::vector<float> x = testing::random_floats(rng, n_tokens * cols);
    std::vector<float> a(n_tokens * rows), b(n_tokens * rows);
    best_cpu_backend().matmul(w, x.data(), a.data(), n_tokens, one);
    best_cpu_backend().matmul(w, x.data(), b.data(), n_tokens, two);
    EXPECT_EQ(a, b) << "tokens=" << n_tokens;
  }
}

}  // namespace
}  // namespace kairo::kernels
