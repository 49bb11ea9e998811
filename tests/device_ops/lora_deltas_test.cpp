// add_lora_deltas against the scalar reference (devices without a fused kernel run Device's default: gathers and
// small matmuls per group), and a token's outputs alone equal to its outputs in the mixed step.
#include <algorithm>
#include <random>

#include "kernels/kernel_test_util.h"
#include "kernels/ref/ref_ops.h"
#include "device_ops/device_ops_util.h"

namespace kairo::kernels::device_ops {
namespace {

using kernels::testing::random_floats;
using kernels::testing::RandomWeight;
using kernels::testing::random_weight;
using testing::from_device;
using testing::rel_error;
using testing::to_device;

constexpr int64_t kNIn = 96;
const std::vector<int64_t> kNOut = {80, 24};  // two projections reading the same input (gate and up)
const std::vector<int32_t> kRows = {5, 1, 6, 2, 0, 4};  // token rows, group after group (token 3: the base)
const std::vector<int64_t> kOffsets = {0, 2, 2, 5, 6};   // four groups, one empty
const std::vector<int> kRanks = {16, 8, 16, 8};
constexpr int64_t kTokens = 7;

struct Step {
  std::vector<RandomWeight> mats;  // reserved up front: views point into them
  std::vector<LoraPairView> host_pairs;
  std::vector<DeviceMatrix> on_device;
  std::vector<DeviceLoraPair> pairs;
  std::vector<float> x;
  std::vector<std::vector<float>> y0;
};

Step make_step(Device& d, DType type) {
  std::mt19937 rng(17);
  Step s;
  s.mats.reserve(2 * kRanks.size() * kNOut.size());
  std::vector<MatrixView> views;
  for (size_t g = 0; g < kRanks.size(); ++g) {
    for (size_t i = 0; i < kNOut.size(); ++i) {
      if ((g + i) % 3 == 2) {  // this adapter leaves projection i alone
        s.host_pairs.push_back({});
        continue;
      }
      s.mats.push_back(random_weight(rng, type, kRanks[g], kNIn));
      s.mats.push_back(random_weight(rng, type, kNOut[i], kRanks[g]));
      s.host_pairs.push_back({s.mats[s.mats.size() - 2].view, s.mats.back().view, 0.5f});
      views.push_back(s.mats[s.mats.size() - 2].view);
      views.push_back(s.mats.back().view);
    }
  }
  auto uploaded = d.upload_matrices(views);
  EXPECT_TRUE(uploaded.ok()) << (uploaded.ok() ? "" : uploaded.error().message);
  s.on_device = std::move(*uploaded);
  size_t next = 0;
  for (const LoraPairView& p : s.host_pairs) {
    if (p.a.data == nullptr) {
      s.pairs.push_back({});
      continue;
    }
    s.pairs.push_back({&s.on_device[next], &s.on_device[next + 1], p.scale});
    next += 2;
  }
  s.x = random_floats(rng, static_cast<size_t>(kTokens * kNIn));
  for (int64_t n : kNOut) s.y0.push_back(random_floats(rng, static_cast<size_t>(kTokens * n)));
  return s;
}

// The device's outputs for groups [g0, g1) of the step (rows and offsets rebased), y starting at s.y0.
std::vector<std::vector<float>> device_deltas(Device& d, const Step& s, int g0, int g1) {
  const auto n_targets = static_cast<int>(kNOut.size());
  std::vector<int32_t> rows(kRows.begin() + kOffsets[g0], kRows.begin() + kOffsets[g1]);
  std::vector<int64_t> offsets;
  for (int g = g0; g <= g1; ++g) offsets.push_back(kOffsets[g] - kOffsets[g0]);
  const int max_rank = *std::max_element(kRanks.begin(), kRanks.end());
  const int64_t widest = *std::max_element(kNOut.begin(), kNOut.end());
  std::vector<DeviceSpan> ys;
  for (const auto& y : s.y0) ys.push_back(to_device(d, y));
  std::vector<DeviceSpan> owned = {to_device(d, s.x), to_device(d, rows),
                                   testing::zeros(d, static_cast<size_t>(n_targets * kTokens * max_rank) * 4),
                                   testing::zeros(d, static_cast<size_t>(kTokens * kNIn) * 4),
                                   testing::zeros(d, static_cast<size_t>(kTokens * widest) * 4),
                                   to_device(d, std::vector<float>(kTokens, 1.0f))};
  DeviceLoraDeltas job;
  job.x = owned[0];
  job.n_in = kNIn;
  job.n_groups = g1 - g0;
  job.offsets = offsets.data();
  job.rows = owned[1];
  job.n_targets = n_targets;
  job.pairs = s.pairs.data() + static_cast<ptrdiff_t>(g0) * n_targets;
  job.ys = ys.data();
  job.max_rank = max_rank;
  job.h = owned[2];
  job.gather = owned[3];
  job.expand = owned[4];
  job.ones = owned[5];
  d.add_lora_deltas(job);
  std::vector<std::vector<float>> out;
  for (size_t i = 0; i < ys.size(); ++i) {
    out.push_back(from_device<float>(d, ys[i], s.y0[i].size()));
    d.free(ys[i]);
  }
  for (DeviceSpan span : owned) d.free(span);
  return out;
}

class DeviceLoraDeltasTest : public ::testing::TestWithParam<DType> {};

// Tolerance: dots of 96 (shrink) and 16 (expand) terms in f32 against the reference's double sums, ~1e-6 of the
// outputs' scale; a wrong row, rank or scale is of the delta's own size.
TEST_P(DeviceLoraDeltasTest, MatchesReferenceAndIsBatchInvariant) {
  KAIRO_TEST_DEVICE(d);
  const DType type = GetParam();
  const auto types = testing::device_weight_types();
  if (std::find(types.begin(), types.end(), type) == types.end()) GTEST_SKIP() << "the device does not take it";
  const Step s = make_step(*d, type);
  const auto n_groups = static_cast<int>(kOffsets.size()) - 1;
  const auto got = device_deltas(*d, s, 0, n_groups);

  std::vector<std::vector<float>> ref = s.y0;
  std::vector<float*> outs;
  for (auto& y : ref) outs.push_back(y.data());
  std::vector<float> h(kNOut.size() * kTokens * 16);
  const LoraDeltas job{s.x.data(), kNIn, n_groups, kOffsets.data(), kRows.data(), static_cast<int>(kNOut.size()),
                       s.host_pairs.data(), outs.data(), h.data(), 16};
  ThreadPool pool(1);
  ref::add_lora_deltas(job, pool);
  for (size_t i = 0; i < kNOut.size(); ++i) {
    EXPECT_LE(rel_error(got[i], ref[i]), 1e-5) << "projection " << i;
    EXPECT_EQ(std::vector<float>(got[i].begin() + 3 * kNOut[i], got[i].begin() + 4 * kNOut[i]),
              std::vector<float>(s.y0[i].begin() + 3 * kNOut[i], s.y0[i].begin() + 4 * kNOut[i]))
        << "the base token's row was touched";
  }
  // Each group alone: its tokens' rows bit for bit as in the mixed step.
  for (int g = 0; g < n_groups; ++g) {
    const auto alone = device_deltas(*d, s, g, g + 1);
    for (int64_t j = kOffsets[g]; j < kOffsets[g + 1]; ++j) {
      const int64_t row = kRows[static_cast<size_t>(j)];
      for (size_t i = 0; i < kNOut.size(); ++i) {
        EXPECT_TRUE(testing::bitwise_equal(alone[i].data() + row * kNOut[i], got[i].data() + row * kNOut[i],
                                           static_cast<size_t>(kNOut[i])))
            << "group " << g << " token " << row << " projection " << i;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Types, DeviceLoraDeltasTest, ::testing::Values(DType::F16, DType::F32),
                         [](const ::testing::TestParamInfo<DType>& info) {
                           return std::string(dtype_name(info.param));
                         });

}  // namespace
}  // namespace kairo::kernels::device_ops
