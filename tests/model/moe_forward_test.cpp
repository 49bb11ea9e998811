// The mixture-of-experts feed-forward in the decoder: a step reads only the experts its tokens chose, each at most
// once, and a sequence's logits do not depend on the rest of the batch (bit for bit), on a host-memory device and on
// one with memory of its own (router logits brought down to the host).
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "fake_device.h"
#include "model/model.h"
#include "test_paths.h"

namespace kairo::model {
namespace {

// Records every weight matrix matmul is given (by the address the device keeps it at).
class RecordingDevice : public testing::FakeGpuDevice {
 public:
  std::map<const void*, int> uses;
  void matmul(const kernels::DeviceMatrix* ws, int n_mats, kernels::DeviceSpan x, const kernels::DeviceSpan* ys,
              int64_t n_tokens, kernels::Numerics numerics) override {
    for (int i = 0; i < n_mats; ++i) ++uses[ws[i].span.ptr];
    FakeGpuDevice::matmul(ws, n_mats, x, ys, n_tokens, numerics);
  }
};

// Sequence `seq` of n prompt tokens starting at first_token, its KV in blocks block0.. (16 slots each).
void add_sequence(Batch& b, int seq, int block0, int n, int32_t first_token) {
  for (int p = 0; p < n; ++p) {
    b.token_ids.push_back(first_token + 7 * p % 900);
    b.positions.push_back(p);
    b.seq_idx.push_back(seq);
    b.slot_mapping.push_back(static_cast<int64_t>(block0) * 16 + p);
  }
  b.logits_rows.push_back(static_cast<int32_t>(b.token_ids.size()) - 1);
}

std::vector<float> run(Model& m, KvStorage& kv, const Batch& b) {
  ThreadPool pool(2);
  StepBuffers buffers(m.shared_device());
  std::vector<float> logits;
  m.forward(b, kv, buffers, logits, pool);
  return logits;
}

TEST(MoeForward, AStepReadsOnlyTheChosenExpertsEachOnce) {
  auto device = std::make_shared<RecordingDevice>();
  auto m = Model::load(kairo::testing::shared_path("models/synth-qwen3moe.Q4_0.gguf"), device);
  ASSERT_TRUE(m.ok()) << m.error().message;
  const ModelConfig& c = (*m)->config();
  ASSERT_TRUE(c.moe());
  ASSERT_EQ(c.n_experts, 8);
  ASSERT_EQ(c.n_experts_used, 2);
  // Which (layer, expert) each expert matrix belongs to.
  std::map<const void*, std::pair<int, int>> expert_of;
  for (int l = 0; l < c.n_layers; ++l) {
    const LayerWeights& L = (*m)->weights().layers[static_cast<size_t>(l)];
    for (int e = 0; e < c.n_experts; ++e) {
      for (const auto* stack : {&L.exp_gate, &L.exp_up, &L.exp_down})
        expert_of[(*stack)[static_cast<size_t>(e)].span.ptr] = {l, e};
    }
  }
  ASSERT_EQ(expert_of.size(), static_cast<size_t>(3 * c.n_layers * c.n_experts));
  auto kv = KvStorage::create((*m)->shared_device(), c, 8, 16, DType::F16);
  ASSERT_TRUE(kv.ok()) << kv.error().message;

  for (int n_tokens : {1, 24}) {
    device->uses.clear();
    Batch b;
    add_sequence(b, 0, 0, n_tokens, 11);
    b.block_tables = {0, 1};
    b.max_blocks_per_seq = 2;
    run(**m, *kv, b);
    std::map<int, std::set<int>> experts_per_layer;
    int expert_matmuls = 0;
    for (const auto& [ptr, count] : device->uses) {
      auto it = expert_of.find(ptr);
      if (it == expert_of.end()) continue;
      EXPECT_EQ(count, 1) << "layer " << it->second.first << " expert " << it->second.second << ", " << n_tokens
                          << " tokens: an expert's weights are read once per step";
      experts_per_layer[it->second.first].insert(it->second.second);
      ++expert_matmuls;
    }
    ASSERT_EQ(experts_per_layer.size(), static_cast<size_t>(c.n_layers));
    int active = 0;
    for (const auto& [layer, experts] : experts_per_layer) {
      if (n_tokens == 1) EXPECT_EQ(experts.size(), 2u) << "layer " << layer << ": one token reads its 2 experts only";
      active += static_cast<int>(experts.size());
    }
    EXPECT_EQ(expert_matmuls, 3 * active);  // gate, up and down of each active expert
    if (n_tokens == 24) EXPECT_GT(active, 2 * c.n_layers);  // many tokens spread over more experts
  }
}

// Sequence A alone, then A together with B (different tokens, so other experts are active and A's rows are gathered
// out of a larger step): A's logits are bit-identical.
void expect_batch_invariant(std::shared_ptr<kernels::Device> device, const char* file) {
  auto m = Model::load(kairo::testing::shared_path(file), std::move(device));
  ASSERT_TRUE(m.ok()) << m.error().message;
  const ModelConfig& c = (*m)->config();
  auto kv = KvStorage::create((*m)->shared_device(), c, 12, 16, DType::F16);
  ASSERT_TRUE(kv.ok()) << kv.error().message;
  Batch alone;
  add_sequence(alone, 0, 0, 20, 5);
  alone.block_tables = {0, 1, 2};
  alone.max_blocks_per_seq = 3;
  const std::vector<float> alone_logits = run(**m, *kv, alone);
  Batch both;
  add_sequence(both, 0, 3, 20, 5);
  add_sequence(both, 1, 6, 33, 300);
  both.block_tables = {3, 4, 5, 6, 7, 8};
  both.max_blocks_per_seq = 3;
  const std::vector<float> both_logits = run(**m, *kv, both);
  ASSERT_EQ(alone_logits.size(), static_cast<size_t>(c.n_vocab));
  ASSERT_EQ(both_logits.size(), 2u * static_cast<size_t>(c.n_vocab));
  for (int i = 0; i < c.n_vocab; ++i) ASSERT_EQ(alone_logits[static_cast<size_t>(i)], both_logits[static_cast<size_t>(i)]) << "vocab " << i;
}

TEST(MoeForward, LogitsOfASequenceAreBitIdenticalAloneAndInABatch) {
  for (const char* file : {"models/synth-qwen3moe.Q4_0.gguf", "models/synth-qwen3moe.f16.gguf"}) {
    SCOPED_TRACE(file);
    expect_batch_invariant(kernels::make_cpu_device(), file);
    auto own_memory = std::make_shared<testing::FakeGpuDevice>();  // the router logits go through download()
    own_memory->memory_bytes = 256ull << 20;
    expect_batch_invariant(own_memory, file);
  }
}

}  // namespace
}  // namespace kairo::model
