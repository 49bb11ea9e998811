// Paged attention of every optimized path against the reference: scattered block tables, several sequences in one
// batch, GQA groups 1/2/4/7/8, odd head counts, f32/f16/bf16 KV and contexts past 1000 positions; and every query
// token of a batch bit for bit what it gets alone.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <vector>

#include "core/thread_pool.h"
#include "kernel_test_util.h"

namespace kairo::kernels {
namespace {

using testing::compare;
using testing::describe;
using testing::Diff;

struct AttnCase {
  int n_heads;
  int n_kv_heads;
  int head_dim;
  DType kv_dtype;
  int block_size;
  std::vector<int> seq_lens;   // context length of each sequence (KV already written for all positions)
  std::vector<int> n_queries;  // how many trailing positions of each sequence are queries in this batch
  int window = 0;              // AttentionBatch::window (sliding-window layers)
  float softcap = 0;           // AttentionBatch::softcap
  bool sinks = false;          // AttentionBatch::sinks: random per-head logits
};

void run_case(const Backend& be, const AttnCase& c, ThreadPool& pool) {
  std::mt19937 rng(42 + c.n_heads * 7 + c.head_dim);
  const int n_seqs = static_cast<int>(c.seq_lens.size());
  const int max_len = *std::max_element(c.seq_lens.begin(), c.seq_lens.end());
  const int max_blocks = (max_len + c.block_size - 1) / c.block_size;
  const int n_blocks = n_seqs * max_blocks + 3;
  // Each sequence gets blocks from a shuffled pool, so consecutive positions jump around the cache.
  std::vector<int32_t> pool_ids(n_blocks);
  std::iota(pool_ids.begin(), pool_ids.end(), 0);
  std::shuffle(pool_ids.begin(), pool_ids.end(), rng);
  std::vector<int32_t> tables(static_cast<size_t>(n_seqs * max_blocks), -1);
  int next = 0;
  for (int s = 0; s < n_seqs; ++s)
    for (int b = 0; b < (c.seq_lens[s] + c.block_size - 1) / c.block_size; ++b)
      tables[s * max_blocks + b] = pool_ids[next++];

  const int64_t kv_row = static_cast<int64_t>(c.n_kv_heads) * c.head_dim;
  const size_t elem = c.kv_dtype == DType::F32 ? 4 : 2;
  const int64_t n_slots = static_cast<int64_t>(n_blocks) * c.block_size;
  std::vector<uint8_t> kmem(n_slots * kv_row * elem), vmem(kmem.size());
  KvLayerView kv{kmem.data(), vmem.data(), c.kv_dtype, c.n_kv_heads, c.head_dim, c.block_size};
  // Fill every position of every sequence through the reference writer.
  for (int s = 0; s < n_seqs; ++s) {
    std::vector<int64_t> slots(c.seq_lens[s]);
    for (int j = 0; j < c.seq_lens[s]; ++j)
      slots[j] = static_cast<int64_t>(tables[s * max_blocks + j / c.block_size]) * c.block_size + j % c.block_size;
    const auto k = testing::random_floats(rng, slots.size() * kv_row);
    const auto v = testing::random_floats(rng, slots.size() * kv_row);
    reference_backend().kv_write(kv, slots.data(), k.data(), v.data(), static_cast<int64_t>(slots.size()));
  }
  std::vector<int32_t> positions, seq_idx;
  for (int s = 0; s < n_seqs; ++s)
    for (int j = c.seq_lens[s] - c.n_queries[s]; j < c.seq_lens[s]; ++j) {
      positions.push_back(j);
      seq_idx.push_back(s);
    }
  AttentionBatch batch;
  batch.n_tokens = static_cast<int64_t>(positions.size());
  batch.positions = positions.data();
  batch.seq_idx = seq_idx.data();
  batch.block_tables = tables.data();
  batch.max_blocks_per_seq = max_blocks;
  batch.window = c.window;
  batch.softcap = c.softcap;
  std::vector<float> sinks;
  if (c.sinks) {
    sinks = testing::random_floats(rng, static_cast<size_t>(c.n_heads), 3.0f);
    batch.sinks = sinks.data();
  }
  // Large-ish queries make the softmax peaked, so errors in the max/rescaling logic would show.
  const auto q = testing::random_floats(rng, batch.n_tokens * c.n_heads * c.head_dim, 2.0f);
  const float scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim));
  std::vector<float> ref(q.size()), got(q.size(), -1.0f);
  reference_backend().attention(q.data(), ref.data(), kv, batch, c.n_heads, scale, pool);
  be.attention(q.data(), got.data(), kv, batch, c.n_heads, scale, pool);
  const Diff d = compare(got, ref);
  // f32 accumulation over up to ~1500 positions against the double reference, plus: like the reference, the
  // kernels round each probability to the KV dtype, and a probability computed in f32 (vs double) can land on the
  // other side of a rounding midpoint: one ulp of p (2^-10 relative for f16, 2^-7 for bf16) times |v| <= ~5.
  const double p_ulp = c.kv_dtype == DType::F16 ? 1.0 / 1024 : c.kv_dtype == DType::BF16 ? 1.0 / 128 : 0.0;
  EXPECT_LE(d.max_abs, 2e-5 * d.rms_ref * std::sqrt(static_cast<double>(max_len)) + 5 * p_ulp + 1e-6)
      << describe(d);
  // Flips are rare: the typical error stays at f32 rounding level.
  EXPECT_LE(d.rms_err, 2e-5 * d.rms_ref * std::sqrt(static_cast<double>(max_len))) << describe(d);

  // Batch invariance: each query token alone (a decode step) gives exactly the bits it got inside the batch, where
  // consecutive query tokens of a sequence share their work items.
  const int64_t q_row = static_cast<int64_t>(c.n_heads) * c.head_dim;
  std::vector<float> alone(static_cast<size_t>(q_row));
  for (int64_t t = 0; t < batch.n_tokens; ++t) {
    const int32_t zero = 0;
    AttentionBatch one{1, &positions[t], &zero, tables.data() + seq_idx[t] * max_blocks, max_blocks, c.window,
                       c.softcap, batch.sinks};
    be.attention(q.data() + t * q_row, alone.data(), kv, one, c.n_heads, scale, pool);
    EXPECT_EQ(std::memcmp(alone.data(), got.data() + t * q_row, alone.size() * sizeof(float)), 0)
        << "query token " << t << " alone differs from the batch";
  }
}

class AttentionTest : public ::testing::TestWithParam<cpu::Isa> {};

TEST_P(AttentionTest, GqaGroupsAndDtypes) {
  KAIRO_BACKEND_OR_SKIP(be, GetParam());
  ThreadPool pool(2);
  for (DType dt : {DType::F32, DType::F16, DType::BF16}) {
    for (auto [h, kvh] : {std::pair{8, 8}, {8, 4}, {8, 2}, {32, 4}, {7, 1}, {14, 2}}) {
      SCOPED_TRACE(std::string(dtype_name(dt)) + " heads=" + std::to_string(h) + " kv_heads=" + std::to_string(kvh));
      run_case(*be, {h, kvh, 64, dt, 16, {1, 37, 70}, {1, 5, 17}}, pool);
    }
  }
}

TEST_P(AttentionTest, OddHeadDimAndBlockSize) {
  KAIRO_BACKEND_OR_SKIP(be, GetParam());
  ThreadPool pool(2);
  SCOPED_TRACE("odd shapes");
  run_case(*be, {6, 3, 40, DType::F16, 7, {23, 9}, {23, 1}}, pool);
  run_case(*be, {5, 5, 17, DType::F32, 3, {50}, {3}}, pool);
}

TEST_P(AttentionTest, LongContextOverManyBlocks) {
  KAIRO_BACKEND_OR_SKIP(be, GetParam());
  ThreadPool pool(2);
  run_case(*be, {32, 4, 64, DType::F16, 16, {1100, 1500}, {3, 1}}, pool);
  run_case(*be, {16, 2, 128, DType::BF16, 32, {1031}, {8}}, pool);
}

// Sliding windows shorter and longer than a chunk (a window's start inside a chunk, whole chunks skipped), a window
// of one position, windows longer than the context, and soft-capped scores (gemma2) with and without a window.
TEST_P(AttentionTest, SlidingWindowAndSoftcap) {
  KAIRO_BACKEND_OR_SKIP(be, GetParam());
  ThreadPool pool(2);
  for (int window : {1, 8, 37, 300, 5000}) {
    SCOPED_TRACE("window " + std::to_string(window));
    run_case(*be, {8, 2, 64, DType::F16, 16, {1, 37, 70, 1100}, {1, 5, 17, 3}, window}, pool);
    run_case(*be, {6, 3, 40, DType::F32, 7, {23, 9}, {23, 1}, window}, pool);
  }
  for (float cap : {1.5f, 30.0f}) {
    SCOPED_TRACE("softcap " + std::to_string(cap));
    run_case(*be, {8, 4, 64, DType::F16, 16, {1, 37, 70}, {1, 5, 17}, 0, cap}, pool);
    run_case(*be, {8, 4, 128, DType::BF16, 16, {300}, {40}, 8, cap}, pool);
  }
}

// Attention sinks (gpt-oss): a per-head logit in the normalisation, with and without a window, one position too.
TEST_P(AttentionTest, Sinks) {
  KAIRO_BACKEND_OR_SKIP(be, GetParam());
  ThreadPool pool(2);
  run_case(*be, {8, 2, 64, DType::F16, 16, {1, 37, 70}, {1, 5, 17}, 0, 0, true}, pool);
  run_case(*be, {8, 2, 64, DType::F16, 16, {1, 37, 200}, {1, 5, 17}, 8, 0, true}, pool);
  run_case(*be, {6, 3, 40, DType::F32, 7, {23, 9}, {23, 1}, 0, 0, true}, pool);
}

INSTANTIATE_TEST_SUITE_P(Isas, AttentionTest, ::testing::ValuesIn(testing::optimized_isas()),
                         testing::isa_param_name);

}  // namespace
}  // namespace kairo::kernels
