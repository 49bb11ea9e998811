// The fused LoRA deltas (Backend::add_lora_deltas) on every ISA path against the scalar reference, and the
// batch-invariance contract: a token's outputs are bit for bit the same alone as in a step of many groups, whatever the
// thread count. Shapes: several groups (one empty, one larger than a work item's token block, one with every
// projection absent), ranks 8 and 16 (and 5, 32, 72 for the zero-padded, several-chunk and leftover paths), absent
// projections, output widths that are not multiples of the vector width, F16, BF16 and F32 matrices. Also through
// the CPU device: the fused op and the device's default composite of small ops (a backend without the kernel) agree.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <deque>
#include <string>
#include <vector>

#include "core/thread_pool.h"
#include "kernel_test_util.h"
#include "kernels/device.h"

namespace kairo::kernels {
namespace {

struct LoraShape {
  std::string name;
  int64_t n_in;
  std::vector<int64_t> n_out;  // per projection
  DType a_type, b_type;
};

// Group sizes (tokens per adapter) and each group's rank; tokens of no group are the base model's.
const std::vector<int64_t> kLoraGroupSizes = {3, 0, 1, 37, 5, 2, 4};
const std::vector<int> kRanks = {16, 8, 72, 8, 32, 5, 16};
constexpr int64_t kBaseTokens = 4;
constexpr int kAllAbsentGroup = 6;

// A step's call site: the input, the grouping, every group's pairs and the outputs before the deltas.
struct Problem {
  int64_t n_tokens = 0;
  int64_t n_in = 0;
  std::vector<int64_t> n_out;
  std::vector<float> x;                     // [n_tokens, n_in]
  std::vector<int32_t> rows;                // grouped token rows
  std::vector<int64_t> offsets;             // [n_groups + 1]
  std::deque<testing::RandomWeight> mats;   // the pairs' storage
  std::vector<LoraPairView> pairs;          // [n_groups, n_targets]
  std::vector<std::vector<float>> y0;       // per projection [n_tokens, n_out]
  int max_rank = 0;

  int n_groups() const { return static_cast<int>(offsets.size()) - 1; }
  int n_targets() const { return static_cast<int>(n_out.size()); }
};

Problem make_problem(const LoraShape& s, uint32_t seed) {
  std::mt19937 rng(seed);
  Problem p;
  p.n_in = s.n_in;
  p.n_out = s.n_out;
  for (int64_t n : kLoraGroupSizes) p.n_tokens += n;
  p.n_tokens += kBaseTokens;
  p.x = testing::random_floats(rng, static_cast<size_t>(p.n_tokens * s.n_in));
  // Tokens dealt to the groups in a shuffled order (each group's ascending, as the step's grouping makes them).
  std::vector<int32_t> order(static_cast<size_t>(p.n_tokens));
  for (int32_t t = 0; t < p.n_tokens; ++t) order[static_cast<size_t>(t)] = t;
  std::shuffle(order.begin(), order.end(), rng);
  p.offsets.assign(1, 0);
  for (int64_t n : kLoraGroupSizes) {
    std::vector<int32_t> mine(order.begin() + p.offsets.back(), order.begin() + p.offsets.back() + n);
    std::sort(mine.begin(), mine.end());
    p.rows.insert(p.rows.end(), mine.begin(), mine.end());
    p.offsets.push_back(p.offsets.back() + n);
  }
  for (int g = 0; g < p.n_groups(); ++g) {
    const int rank = kRanks[static_cast<size_t>(g)];
    for (int i = 0; i < p.n_targets(); ++i) {
      if (g == kAllAbsentGroup || (g + i) % 4 == 3) {  // this adapter leaves projection i alone
        p.pairs.push_back({});
        continue;
      }
      p.mats.push_back(testing::random_weight(rng, s.a_type, rank, s.n_in));
      const MatrixView a = p.mats.back().view;
      p.mats.push_back(testing::random_weight(rng, s.b_type, s.n_out[static_cast<size_t>(i)], rank));
      const MatrixView b = p.mats.back().view;
      p.pairs.push_back({a, b, 0.25f * static_cast<float>(1 + (g + i) % 3)});
      p.max_rank = std::max(p.max_rank, rank);
    }
  }
  for (int64_t n : p.n_out) p.y0.push_back(testing::random_floats(rng, static_cast<size_t>(p.n_tokens * n)));
  return p;
}

// The outputs after `be` adds the step's deltas -- or, with `only_row` set, that one token's alone, in a step of its
// own.
std::vector<std::vector<float>> run(const Backend& be, const Problem& p, ThreadPool& pool, int only_row = -1) {
  std::vector<std::vector<float>> ys = p.y0;
  std::vector<float*> outs;
  for (auto& y : ys) outs.push_back(y.data());
  std::vector<int32_t> rows = p.rows;
  std::vector<int64_t> offsets = p.offsets;
  const LoraPairView* pairs = p.pairs.data();
  int n_groups = p.n_groups();
  if (only_row >= 0) {
    const auto at = static_cast<int64_t>(std::find(p.rows.begin(), p.rows.end(), only_row) - p.rows.begin());
    const auto g = static_cast<int>(std::upper_bound(p.offsets.begin(), p.offsets.end(), at) - p.offsets.begin()) - 1;
    rows = {only_row};
    offsets = {0, 1};
    pairs += static_cast<ptrdiff_t>(g) * p.n_targets();
    n_groups = 1;
  }
  std::vector<float> h(static_cast<size_t>(p.n_targets() * offsets.back() * std::max(p.max_rank, 1)), -7.0f);
  const LoraDeltas job{p.x.data(), p.n_in, n_groups,      offsets.data(), rows.data(),
                       p.n_targets(), pairs, outs.data(), h.data(),       p.max_rank};
  be.add_lora_deltas(job, pool);
  return ys;
}

double max_magnitude(const std::vector<float>& v) {
  double m = 0;
  for (float x : v) m = std::max(m, static_cast<double>(std::fabs(x)));
  return m;
}

const std::vector<LoraShape> kShapes = {
    {"qkv_f16", 100, {70, 16, 33}, DType::F16, DType::F16},  // n_in and n_out off the vector width
    {"gate_up_f32", 256, {96, 96}, DType::F32, DType::F32},
    {"down_bf16_f16", 96, {48}, DType::BF16, DType::F16},
    {"qkv_f16_f32", 128, {64, 40, 40}, DType::F16, DType::F32},
};

class LoraDeltasTest : public ::testing::TestWithParam<cpu::Isa> {};

// Each output against the reference's (double sums): the deltas' f32 rounding is that of dots of at most 256 terms
// (shrink) and 32 (expand), relative ~1e-6 of the terms' magnitudes; 1e-5 of the largest output leaves room and
// still catches any wrong row, rank or scale (errors of the delta's own size).
TEST_P(LoraDeltasTest, MatchesTheReferenceAndLeavesTheBaseTokensAlone) {
  KAIRO_BACKEND_OR_SKIP(be, GetParam());
  ASSERT_NE(be->add_lora_deltas, nullptr);
  ThreadPool pool(2);
  for (const LoraShape& s : kShapes) {
    const Problem p = make_problem(s, 3);
    const auto got = run(*be, p, pool);
    const auto ref = run(reference_backend(), p, pool);
    std::vector<bool> in_group(static_cast<size_t>(p.n_tokens), false);
    for (int32_t r : p.rows) in_group[static_cast<size_t>(r)] = true;
    for (int i = 0; i < p.n_targets(); ++i) {
      const auto& y = got[static_cast<size_t>(i)];
      const auto& yr = ref[static_cast<size_t>(i)];
      const testing::Diff d = testing::compare(y, yr);
      EXPECT_LE(d.max_abs, 1e-5 * max_magnitude(yr)) << s.name << " projection " << i << ": " << testing::describe(d);
      EXPECT_GT(testing::compare(y, p.y0[static_cast<size_t>(i)]).max_abs, 1.0) << s.name << ": the deltas act";
      const int64_t n_out = p.n_out[static_cast<size_t>(i)];
      for (int64_t t = 0; t < p.n_tokens; ++t) {
        if (in_group[static_cast<size_t>(t)]) continue;
        EXPECT_EQ(std::memcmp(y.data() + t * n_out, p.y0[static_cast<size_t>(i)].data() + t * n_out,
                              sizeof(float) * static_cast<size_t>(n_out)),
                  0)
            << s.name << ": base token " << t << " was touched";
      }
    }
  }
}

TEST_P(LoraDeltasTest, EachTokenAloneEqualsItsRowInTheMixedStep) {
  KAIRO_BACKEND_OR_SKIP(be, GetParam());
  ThreadPool pool2(2), pool1(1), pool3(3);
  for (const LoraShape& s : kShapes) {
    const Problem p = make_problem(s, 5);
    const auto together = run(*be, p, pool2);
    const auto one_thread = run(*be, p, pool1);
    const auto three_threads = run(*be, p, pool3);
    for (int i = 0; i < p.n_targets(); ++i) {
      const auto k = static_cast<size_t>(i);
      EXPECT_EQ(together[k], one_thread[k]) << s.name << " projection " << i;
      EXPECT_EQ(together[k], three_threads[k]) << s.name << " projection " << i;
    }
    for (int32_t row : p.rows) {
      const auto alone = run(*be, p, pool2, row);
      for (int i = 0; i < p.n_targets(); ++i) {
        const int64_t n_out = p.n_out[static_cast<size_t>(i)];
        EXPECT_EQ(std::memcmp(alone[static_cast<size_t>(i)].data() + row * n_out,
                              together[static_cast<size_t>(i)].data() + row * n_out,
                              sizeof(float) * static_cast<size_t>(n_out)),
                  0)
            << s.name << ": token " << row << " projection " << i;
      }
    }
  }
}

// Through the CPU device's interface: the fused op, and the Device default (gather, matmuls, scale, add_rows_scaled
// per group) that a backend without the kernel gets, both near the reference.
TEST_P(LoraDeltasTest, CpuDeviceFusedAndComposedAgree) {
  KAIRO_BACKEND_OR_SKIP(be, GetParam());
  Backend unfused = *be;
  unfused.add_lora_deltas = nullptr;
  ThreadPool pool(2);
  const Problem p = make_problem(kShapes[0], 9);
  const auto ref = run(reference_backend(), p, pool);
  for (const Backend* with : {be, static_cast<const Backend*>(&unfused)}) {
    std::shared_ptr<Device> dev = make_cpu_device(with);
    // The pairs as device matrices (the CPU device's own copies, as a loaded adapter's).
    std::vector<MatrixView> views;
    for (const LoraPairView& pair : p.pairs) {
      if (pair.a.data == nullptr) continue;
      views.push_back(pair.a);
      views.push_back(pair.b);
    }
    auto uploaded = dev->upload_matrices(views);
    ASSERT_TRUE(uploaded.ok()) << uploaded.error().message;
    std::vector<DeviceLoraPair> pairs;
    size_t next = 0;
    for (const LoraPairView& pair : p.pairs) {
      if (pair.a.data == nullptr) {
        pairs.push_back({});
        continue;
      }
      pairs.push_back({&(*uploaded)[next], &(*uploaded)[next + 1], pair.scale});
      next += 2;
    }
    std::vector<std::vector<float>> ys = p.y0;
    std::vector<DeviceSpan> outs;
    for (auto& y : ys) outs.push_back(DeviceSpan{y.data(), 0, 0});
    const int64_t widest_out = *std::max_element(p.n_out.begin(), p.n_out.end());
    const int64_t largest = *std::max_element(kLoraGroupSizes.begin(), kLoraGroupSizes.end());
    std::vector<float> h(static_cast<size_t>(p.n_targets() * p.offsets.back() * p.max_rank));
    std::vector<float> gather(static_cast<size_t>(largest * p.n_in)), expand(static_cast<size_t>(largest * widest_out));
    std::vector<float> ones(static_cast<size_t>(largest), 1.0f);
    DeviceLoraDeltas job;
    job.x = DeviceSpan{const_cast<float*>(p.x.data()), 0, 0};
    job.n_in = p.n_in;
    job.n_groups = p.n_groups();
    job.offsets = p.offsets.data();
    job.rows = DeviceSpan{const_cast<int32_t*>(p.rows.data()), 0, 0};
    job.n_targets = p.n_targets();
    job.pairs = pairs.data();
    job.ys = outs.data();
    job.max_rank = p.max_rank;
    job.h = DeviceSpan{h.data(), 0, 0};
    job.gather = DeviceSpan{gather.data(), 0, 0};
    job.expand = DeviceSpan{expand.data(), 0, 0};
    job.ones = DeviceSpan{ones.data(), 0, 0};
    dev->begin_step(pool);
    dev->add_lora_deltas(job);
    dev->end_step();
    for (int i = 0; i < p.n_targets(); ++i) {
      const testing::Diff d = testing::compare(ys[static_cast<size_t>(i)], ref[static_cast<size_t>(i)]);
      EXPECT_LE(d.max_abs, 1e-5 * max_magnitude(ref[static_cast<size_t>(i)]))
          << (with == be ? "fused" : "composed") << " projection " << i << ": " << testing::describe(d);
    }
  }
}

std::vector<cpu::Isa> isas_with_scalar() {
  std::vector<cpu::Isa> isas = {cpu::Isa::Scalar};
  for (cpu::Isa isa : testing::optimized_isas()) isas.push_back(isa);
  return isas;
}

INSTANTIATE_TEST_SUITE_P(Isas, LoraDeltasTest, ::testing::ValuesIn(isas_with_scalar()), testing::isa_param_name);

}  // namespace
}  // namespace kairo::kernels
