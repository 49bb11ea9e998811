// The grouped (mixture-of-experts) matmul: every group's outputs must equal, bit for bit, what
// matmul_shared_input gives that group alone on its gathered rows -- on every backend that has the grouped kernel
// (AVX-512, AMX) and through the device's default (gather, then matmul per group), for the expert weight types
// (Q4_0, Q8_0, Q4_K with Q6_K, MXFP4, and float rows, which the grouped pass leaves to the per-group path), group
// sizes on every path (empty, one token, a few, more than the row-tile kernels take at once), gathered input rows
// and packed ones, and both numerics.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "core/thread_pool.h"
#include "kernel_test_util.h"
#include "kernels/device.h"

namespace kairo::kernels {
namespace {

constexpr int64_t kTokens = 40;  // the step's tokens (x rows when rows are gathered)
const std::vector<int64_t> kGroupSizes = {3, 0, 1, 2, 17, 5, 9, 1, 33, 12, 4};

struct GroupedCase {
  std::vector<DType> types;  // per matrix of a group (gate and up: 2)
  std::vector<int64_t> rows;
  int64_t cols;
};

// The groups' input rows: each group picks distinct tokens in ascending order (as routing does).
std::vector<int32_t> pick_rows(std::mt19937& rng, std::vector<int64_t>& offsets) {
  std::vector<int32_t> rows;
  offsets.assign(1, 0);
  std::vector<int32_t> all(kTokens);
  for (int32_t t = 0; t < kTokens; ++t) all[static_cast<size_t>(t)] = t;
  for (int64_t n : kGroupSizes) {
    std::shuffle(all.begin(), all.end(), rng);
    std::vector<int32_t> mine(all.begin(), all.begin() + n);
    std::sort(mine.begin(), mine.end());
    rows.insert(rows.end(), mine.begin(), mine.end());
    offsets.push_back(offsets.back() + n);
  }
  return rows;
}

// Group by group through matmul_shared_input on the gathered (or packed) rows: the expected outputs.
std::vector<std::vector<float>> per_group(const Backend& be, const std::vector<MatrixView>& ws, int n_mats,
                                          const std::vector<int64_t>& offsets, const int32_t* in_rows,
                                          const std::vector<float>& x, int64_t cols, ThreadPool& pool,
                                          Numerics numerics) {
  const int64_t n_out = offsets.back();
  std::vector<std::vector<float>> ys(static_cast<size_t>(n_mats));
  for (int i = 0; i < n_mats; ++i) ys[static_cast<size_t>(i)].assign(static_cast<size_t>(n_out * ws[static_cast<size_t>(i)].n_rows), -3.0f);
  for (size_t g = 0; g + 1 < offsets.size(); ++g) {
    const int64_t first = offsets[g], n = offsets[g + 1] - first;
    if (n == 0) continue;
    std::vector<float> in(static_cast<size_t>(n * cols));
    for (int64_t r = 0; r < n; ++r) {
      const int64_t src = in_rows != nullptr ? in_rows[first + r] : first + r;
      std::memcpy(in.data() + r * cols, x.data() + src * cols, sizeof(float) * static_cast<size_t>(cols));
    }
    std::vector<float*> outs;
    for (int i = 0; i < n_mats; ++i)
      outs.push_back(ys[static_cast<size_t>(i)].data() + first * ws[g * n_mats + static_cast<size_t>(i)].n_rows);
    matmul_shared_input(be, ws.data() + g * n_mats, n_mats, in.data(), outs.data(), n, pool, numerics);
  }
  return ys;
}

void expect_grouped_equals_per_group(const GroupedCase& c) {
  std::mt19937 rng(11);
  ThreadPool pool(2);
  const int n_mats = static_cast<int>(c.types.size());
  const auto n_groups = static_cast<int>(kGroupSizes.size());
  std::vector<testing::RandomWeight> weights;
  for (int g = 0; g < n_groups; ++g)
    for (int i = 0; i < n_mats; ++i)
      weights.push_back(testing::random_weight(rng, c.types[static_cast<size_t>(i)], c.rows[static_cast<size_t>(i)], c.cols));
  std::vector<int64_t> offsets;
  const std::vector<int32_t> rows = pick_rows(rng, offsets);
  const int64_t n_out = offsets.back();
  const std::vector<float> x_tokens = testing::random_floats(rng, static_cast<size_t>(kTokens * c.cols));
  const std::vector<float> x_packed = testing::random_floats(rng, static_cast<size_t>(n_out * c.cols));

  std::vector<const Backend*> backends = {&reference_backend()};
  for (cpu::Isa isa : testing::optimized_isas())
    if (const Backend* be = cpu::cpu_backend(isa)) backends.push_back(be);
  int checked_grouped_kernel = 0;
  for (const Backend* be : backends) {
    std::vector<MatrixView> views;
    std::vector<PackedMatrix> packed;
    for (auto& w : weights) {
      packed.push_back(be->pack_weights != nullptr ? be->pack_weights(w.view) : PackedMatrix{});
      views.push_back(packed.back().view.data != nullptr ? packed.back().view : w.view);
    }
    std::vector<DeviceMatrix> dev_ws;
    for (const MatrixView& v : views) dev_ws.push_back(DeviceMatrix{v, DeviceSpan{const_cast<void*>(v.data), 0, 0}});
    auto device = make_cpu_device(be);
    std::vector<float> gather(static_cast<size_t>(kTokens * c.cols));
    for (Numerics numerics : {Numerics::Exact, Numerics::Relaxed}) {
      for (bool gathered : {true, false}) {
        SCOPED_TRACE(std::string(be->name) + (gathered ? " gathered rows" : " packed rows") +
                     (numerics == Numerics::Exact ? " exact" : " relaxed"));
        const std::vector<float>& x = gathered ? x_tokens : x_packed;
        const int32_t* in_rows = gathered ? rows.data() : nullptr;
        const auto want = per_group(*be, views, n_mats, offsets, in_rows, x, c.cols, pool, numerics);
        std::vector<std::vector<float>> got(static_cast<size_t>(n_mats));
        std::vector<DeviceSpan> ys;
        for (int i = 0; i < n_mats; ++i) {
          got[static_cast<size_t>(i)].assign(want[static_cast<size_t>(i)].size(), -5.0f);
          ys.push_back(DeviceSpan{got[static_cast<size_t>(i)].data(), 0, 0});
        }
        device->begin_step(pool);
        const DeviceGroupedMatmul job{dev_ws.data(), n_mats, n_groups, offsets.data(),
                                      DeviceSpan{const_cast<int32_t*>(in_rows), 0, 0}};
        device->matmul_grouped(job, DeviceSpan{const_cast<float*>(x.data()), 0, 0}, ys.data(),
                               DeviceSpan{gather.data(), 0, 0}, numerics);
        device->end_step();
        for (int i = 0; i < n_mats; ++i) {
          EXPECT_EQ(std::memcmp(got[static_cast<size_t>(i)].data(), want[static_cast<size_t>(i)].data(),
                                want[static_cast<size_t>(i)].size() * sizeof(float)),
                    0)
              << "matrix " << i << " (" << dtype_name(c.types[static_cast<size_t>(i)]) << ")";
        }
        if (be->matmul_grouped != nullptr) ++checked_grouped_kernel;
      }
    }
  }
  // This CPU must have run at least the reference through the device's default; the grouped kernel where it exists.
  if (cpu::cpu_backend(cpu::Isa::Avx2) != nullptr || cpu::cpu_backend(cpu::Isa::Neon) != nullptr) {
    EXPECT_GT(checked_grouped_kernel, 0);
  }
}

TEST(MatmulGrouped, Q4_0GateAndUpEqualPerExpertMatmuls) {
  expect_grouped_equals_per_group({{DType::Q4_0, DType::Q4_0}, {48, 48}, 256});
}

TEST(MatmulGrouped, Q8_0DownWithAPartialTileEqualsPerExpertMatmuls) {
  expect_grouped_equals_per_group({{DType::Q8_0}, {37}, 128});
}

TEST(MatmulGrouped, KQuantsEqualPerExpertMatmuls) {
  expect_grouped_equals_per_group({{DType::Q4_K, DType::Q6_K}, {32, 21}, 512});
}

TEST(MatmulGrouped, Mxfp4EqualsPerExpertMatmuls) {
  expect_grouped_equals_per_group({{DType::MXFP4, DType::MXFP4}, {32, 32}, 256});
}

// Float rows have no row tiles: every group takes the per-group path inside the grouped call.
TEST(MatmulGrouped, FloatAndQuantMixFallsBackPerGroupWithTheSameBits) {
  expect_grouped_equals_per_group({{DType::F16, DType::Q4_0}, {17, 32}, 256});
}

}  // namespace
}  // namespace kairo::kernels
