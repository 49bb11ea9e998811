// matmul and get_rows for every weight type against the scalar reference; weights over one bindable buffer; the
// batch-invariance contract (a token's outputs do not depend on the other tokens of the call).
#include <cstdlib>
#include <random>

#include "kernels/kernel_test_util.h"
#include "kernels/ref/ref_ops.h"
#include "device_ops/device_ops_util.h"

namespace kairo::kernels::device_ops {
namespace {

using kernels::testing::random_floats;
using kernels::testing::random_weight;
using testing::from_device;
using testing::rel_error;
using testing::to_device;

bool is_k_quant(DType t) { return t == DType::Q4_K || t == DType::Q5_K || t == DType::Q6_K; }

std::string type_param_name(const ::testing::TestParamInfo<DType>& info) {
  return std::string(dtype_name(info.param));
}

DeviceMatrix upload_one(Device& d, const MatrixView& v) {
  auto m = d.upload_matrices(std::span<const MatrixView>(&v, 1));
  EXPECT_TRUE(m.ok()) << (m.ok() ? "" : m.error().message);
  EXPECT_FALSE((*m)[0].span.empty());
  return (*m)[0];
}

std::vector<float> device_matmul(Device& d, const DeviceMatrix& w, const std::vector<float>& x, int64_t n_tokens) {
  DeviceSpan xs = to_device(d, x);
  DeviceSpan ys = testing::zeros(d, static_cast<size_t>(n_tokens * w.view.n_rows) * 4);
  d.matmul(&w, 1, xs, &ys, n_tokens, Numerics::Exact);
  std::vector<float> y = from_device<float>(d, ys, static_cast<size_t>(n_tokens * w.view.n_rows));
  d.free(xs);
  d.free(ys);
  return y;
}

class DeviceMatmul : public ::testing::TestWithParam<DType> {};

// Tolerance: the reference dequantizes to the same floats and sums in double, so the only difference is our f32
// summation: a 32-term fma chain per block, <= n_cols/1024 block sums per partial, then a 5-level tree, i.e. about
// 32 + n_cols/1024 + 5 ~ 40 roundings of partial sums bounded by sum |w x|. With random data sum |w x| is about
// sqrt(n_cols) = 23 times the typical |y| and the vector's max is ~3x typical, so the worst case is ~40 * 6e-8 *
// 23 / 3 ~ 2e-5 of max |y|; 1e-4 leaves room, and a wrong element (a misread nibble) is orders above it.
TEST_P(DeviceMatmul, MatchesReferenceOnRaggedShapes) {
  KAIRO_TEST_DEVICE(d);
  const DType type = GetParam();
  const int64_t n_cols = is_k_quant(type) ? 512 : 544;  // 17 blocks of 32: slices that get one block or none
  std::mt19937 rng(42 + static_cast<int>(type));
  ThreadPool pool(1);
  const std::pair<int64_t, int64_t> shapes[] = {{37, 1}, {100, 3}, {250, 17}, {37, 33}};
  for (const auto& [rows, n_tokens] : shapes) {
    auto w = random_weight(rng, type, rows, n_cols);
    const std::vector<float> x = random_floats(rng, static_cast<size_t>(n_tokens * n_cols));
    std::vector<float> ref(static_cast<size_t>(n_tokens * rows));
    ref::matmul(w.view, x.data(), ref.data(), n_tokens, pool);
    const DeviceMatrix dm = upload_one(*d, w.view);
    const std::vector<float> got = device_matmul(*d, dm, x, n_tokens);
    EXPECT_LE(rel_error(got, ref), 1e-4) << dtype_name(type) << " rows=" << rows << " tokens=" << n_tokens;
  }
}

// get_rows is dequantization only: the same float formulas as the reference, so equal up to a rounding where the
// reference's compiler contracted d * q + m into an fma.
TEST_P(DeviceMatmul, GetRowsMatchesReference) {
  KAIRO_TEST_DEVICE(d);
  const DType type = GetParam();
  const int64_t n_cols = is_k_quant(type) ? 512 : 96;
  std::mt19937 rng(7 + static_cast<int>(type));
  auto w = random_weight(rng, type, 100, n_cols);
  const std::vector<int32_t> ids = {0, 99, 5, 5, 42, 17, 63};
  const DeviceMatrix dm = upload_one(*d, w.view);
  DeviceSpan ids_d = to_device(*d, ids);
  DeviceSpan out = testing::zeros(*d, ids.size() * n_cols * 4);
  d->get_rows(dm, ids_d, static_cast<int64_t>(ids.size()), out);
  const std::vector<float> got = from_device<float>(*d, out, ids.size() * n_cols);
  for (size_t t = 0; t < ids.size(); ++t) {
    std::vector<float> ref(static_cast<size_t>(n_cols));
    ref::get_row(w.view, ids[t], ref.data());
    const std::vector<float> row(got.begin() + static_cast<int64_t>(t) * n_cols,
                                 got.begin() + static_cast<int64_t>(t + 1) * n_cols);
    EXPECT_LE(rel_error(row, ref), 1e-6) << dtype_name(type) << " id " << ids[t];
  }
  d->free(ids_d);
  d->free(out);
}

// The contract: row t of a call with n tokens is bit for bit the row computed for the same input in any other call
// (decode variant for n % 8 tokens, prefill variant for whole groups of 8, any position in the batch).
TEST_P(DeviceMatmul, BatchInvariantAcrossTokenCounts) {
  KAIRO_TEST_DEVICE(d);
  const DType type = GetParam();
  const int64_t n_cols = is_k_quant(type) ? 512 : 320;
  const int64_t rows = 70;
  std::mt19937 rng(99 + static_cast<int>(type));
  auto w = random_weight(rng, type, rows, n_cols);
  const int64_t n_all = 40;
  const std::vector<float> x = random_floats(rng, static_cast<size_t>(n_all * n_cols));
  const DeviceMatrix dm = upload_one(*d, w.view);
  const std::vector<float> all = device_matmul(*d, dm, x, n_all);
  for (int64_t n : {1, 5, 8, 13}) {
    for (int64_t first : {int64_t{0}, n_all - n - 3}) {  // the same rows at another batch position
      const std::vector<float> xs(x.begin() + first * n_cols, x.begin() + (first + n) * n_cols);
      const std::vector<float> got = device_matmul(*d, dm, xs, n);
      EXPECT_TRUE(testing::bitwise_equal(got.data(), all.data() + first * rows, static_cast<size_t>(n * rows)))
          << dtype_name(type) << " n_tokens=" << n << " first=" << first;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Types, DeviceMatmul, ::testing::ValuesIn(testing::device_weight_types()), type_param_name);

class DeviceFloatMatmul : public ::testing::TestWithParam<DType> {};

// Float rows need not fill whole 32-value blocks (the demo model's FFN is 172 wide): the last block is partial, its
// missing values count as 0, and nothing past a row is read. Same tolerance as above; bit-identical across token
// counts like every other row.
TEST_P(DeviceFloatMatmul, RowsWithAPartialLastBlock) {
  KAIRO_TEST_DEVICE(d);
  const DType type = GetParam();
  std::mt19937 rng(3);
  ThreadPool pool(1);
  for (const int64_t n_cols : {172, 70, 2}) {
    const int64_t rows = 45;
    auto w = random_weight(rng, type, rows, n_cols);
    const DeviceMatrix dm = upload_one(*d, w.view);
    const std::vector<float> x = random_floats(rng, static_cast<size_t>(9 * n_cols));
    std::vector<float> ref(static_cast<size_t>(9 * rows));
    ref::matmul(w.view, x.data(), ref.data(), 9, pool);
    const std::vector<float> got = device_matmul(*d, dm, x, 9);
    EXPECT_LE(rel_error(got, ref), 1e-4) << dtype_name(type) << " n_cols=" << n_cols;
    const std::vector<float> last(x.end() - n_cols, x.end());
    const std::vector<float> alone = device_matmul(*d, dm, last, 1);
    for (int64_t r = 0; r < rows; ++r) EXPECT_EQ(alone[r], got[8 * rows + r]) << "n_cols=" << n_cols << " row " << r;

    const std::vector<int32_t> ids = {44, 0, 7};
    DeviceSpan ids_d = to_device(*d, ids);
    DeviceSpan out = testing::zeros(*d, ids.size() * n_cols * 4);
    d->get_rows(dm, ids_d, static_cast<int64_t>(ids.size()), out);
    const std::vector<float> rows_got = from_device<float>(*d, out, ids.size() * n_cols);
    for (size_t t = 0; t < ids.size(); ++t) {
      std::vector<float> want(static_cast<size_t>(n_cols));
      ref::get_row(w.view, ids[t], want.data());
      for (int64_t c = 0; c < n_cols; ++c) EXPECT_EQ(rows_got[t * n_cols + c], want[c]) << "id " << ids[t];
    }
    d->free(ids_d);
    d->free(out);
  }
}

INSTANTIATE_TEST_SUITE_P(FloatTypes, DeviceFloatMatmul, ::testing::Values(DType::F32, DType::F16, DType::BF16),
                         type_param_name);

}  // namespace
}  // namespace kairo::kernels::device_ops
