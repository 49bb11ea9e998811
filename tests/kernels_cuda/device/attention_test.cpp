// Paged attention against the reference: decode and prefill batches of several sequences with scattered block
// tables, GQA groups from 1 to 16, head dims 16..256, every KV type, contexts long enough to split.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <string>

#include "device_test_util.h"
#include "kernels/cuda/cuda_backend.h"
#include "kernels/ref/ref_ops.h"
#include "tensor/dtype.h"

namespace kairo::kernels::cuda {
namespace {

using namespace testing;

struct Case {
  int n_heads, n_kv_heads, head_dim;
  DType kv;
  std::vector<int> seq_lens;  // context of each sequence (all its positions are in the cache)
  int new_tokens;             // query tokens per sequence (1: decode; more: prefill chunk at the end)
};

class CudaAttentionTest : public ::testing::TestWithParam<Case> {};

TEST_P(CudaAttentionTest, MatchesReference) {
  const Case c = GetParam();
  const int block_size = 16;
  std::mt19937 rng(7);
  const int n_seqs = static_cast<int>(c.seq_lens.size());
  const int max_len = *std::max_element(c.seq_lens.begin(), c.seq_lens.end());
  const int max_blocks = (max_len + block_size - 1) / block_size;
  const int n_blocks = n_seqs * max_blocks + 3;
  // Scattered block tables: a shuffled permutation of the pool.
  std::vector<int32_t> perm(n_blocks);
  std::iota(perm.begin(), perm.end(), 0);
  std::shuffle(perm.begin(), perm.end(), rng);
  std::vector<int32_t> tables(static_cast<size_t>(n_seqs * max_blocks));
  for (size_t i = 0; i < tables.size(); ++i) tables[i] = perm[i];

  const int64_t kv_row = static_cast<int64_t>(c.n_kv_heads) * c.head_dim;
  const size_t elem = static_cast<size_t>(dtype_info(c.kv).block_bytes);
  std::vector<uint8_t> kc(n_blocks * block_size * kv_row * elem, 0), vc(kc.size(), 0);
  const KvLayerView host_kv{kc.data(), vc.data(), c.kv, c.n_kv_heads, c.head_dim, block_size};
  // Fill every cached position through the reference kv_write.
  std::vector<int64_t> slots;
  for (int s = 0; s < n_seqs; ++s) {
    for (int p = 0; p < c.seq_lens[s]; ++p) slots.push_back(int64_t{tables[s * max_blocks + p / block_size]} * block_size + p % block_size);
  }
  const std::vector<float> k = random_floats(rng, slots.size() * kv_row), v = random_floats(rng, slots.size() * kv_row);
  ref::kv_write(host_kv, slots.data(), k.data(), v.data(), static_cast<int64_t>(slots.size()));

  std::vector<int32_t> positions, seq_idx;
  for (int s = 0; s < n_seqs; ++s) {
    for (int i = 0; i < c.new_tokens; ++i) {
      positions.push_back(c.seq_lens[s] - c.new_tokens + i);
      seq_idx.push_back(s);
    }
  }
  const int64_t n_tok = static_cast<int64_t>(positions.size());
  const std::vector<float> q = random_floats(rng, n_tok * c.n_heads * c.head_dim);
  const float scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim));
  ThreadPool pool(1);
  std::vector<float> want(q.size());
  ref::attention(q.data(), want.data(), host_kv,
                 AttentionBatch{n_tok, positions.data(), seq_idx.data(), tables.data(), max_blocks}, c.n_heads, scale,
                 pool);

  DeviceBuffer dk = to_device(kc), dv = to_device(vc), dq = to_device(q), dout(q.size() * 4);
  DeviceBuffer dpos = to_device(positions), dseq = to_device(seq_idx), dtab = to_device(tables);
  const KvLayerView dev_kv{dk.data(), dv.data(), c.kv, c.n_kv_heads, c.head_dim, block_size};
  cuda_backend().attention(dq.as<float>(), dout.as<float>(), dev_kv,
                           AttentionBatch{n_tok, dpos.as<int32_t>(), dseq.as<int32_t>(), dtab.as<int32_t>(), max_blocks},
                           c.n_heads, scale, pool);
  const Diff d = compare(to_host<float>(dout, want.size()), want);
  // f32 softmax weights against the reference's KV-type-rounded ones: ~1e-3 relative for f16, ~8e-3 for bf16.
  const double tol = c.kv == DType::F32 ? 1e-5 : (c.kv == DType::F16 ? 2e-3 : 1e-2);
  EXPECT_LT(rel_rms(d), tol) << describe(d);
}

std::vector<Case> cases() {
  return {
      {4, 4, 16, DType::F16, {20, 7}, 1},             // aidreams shape: MHA, head_dim 16
      {8, 2, 32, DType::F16, {100, 33, 1}, 1},        // synth-llama: GQA 4, head_dim 32
      {4, 2, 64, DType::F16, {50}, 50},               // synth-qwen2: a whole prompt as one prefill
      {32, 8, 128, DType::F16, {4000, 1500}, 1},      // 8B decode: split KV
      {32, 8, 128, DType::BF16, {700}, 1},
      {32, 8, 128, DType::F32, {700, 5}, 3},
      {28, 4, 128, DType::F16, {300, 1200}, 2},       // group 7
      {64, 4, 96, DType::F16, {260}, 1},              // group 16 (two head groups), head_dim 96
      {8, 8, 256, DType::F16, {129}, 4},              // head_dim 256
  };
}

INSTANTIATE_TEST_SUITE_P(All, CudaAttentionTest, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case>& i) {
                           return "h" + std::to_string(i.param.n_heads) + "_kv" + std::to_string(i.param.n_kv_heads) +
                                  "_d" + std::to_string(i.param.head_dim) + "_" +
                                  std::string(dtype_name(i.param.kv)) + "_t" + std::to_string(i.param.new_tokens) +
                                  "_" + std::to_string(i.index);
                         });

}  // namespace
}  // namespace kairo::kernels::cuda
