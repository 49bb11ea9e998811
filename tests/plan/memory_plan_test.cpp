// make_plan on the synthetic llama with a custom device: memory breakdown, limits and roofline bounds checked
// against numbers computed by hand from the model's shape.
#include <gtest/gtest.h>

#include "gguf/gguf_file.h"
#include "model/config.h"
#include "plan/device_catalog.h"
#include "plan/memory_plan.h"
#include "plan/model_presets.h"
#include "plan/system_memory.h"

namespace kairo::plan {
namespace {

struct Synth {
  model::ModelConfig config;
  std::vector<TensorSpec> tensors;
};

Synth synth_llama() {
  auto file = gguf::File::open(std::string(KAIRO_SHARED_DIR) + "/models/synth-llama-gqa.Q8_0.gguf");
  EXPECT_TRUE(file.ok());
  auto config = model::read_config(*file);
  EXPECT_TRUE(config.ok());
  return {*config, tensors_from_file(*file)};
}

DeviceSpec test_device(uint64_t memory_bytes) {
  DeviceSpec d;
  d.name = "test";
  d.memory_bytes = memory_bytes;
  d.usable_fraction = 1.0;
  d.bandwidth_gbs = 100;
  d.int8_tops = 1000;  // so decode is bandwidth-bound
  d.bf16_tflops = 500;
  return d;
}

TEST(ActivationBytes, FormulaOnSynthLlama) {
  const auto s = synth_llama();
  // Per token f32: 2×256 (residual, norm) + 2×256 (q, attn out) + 2×64 (k, v) + 2×768 (gate, up) = 2688 floats;
  // plus the 8-bit copy of the widest input (768 values = 24 blocks × 34 B). Logits 4 rows × 512, scores 8 × 512.
  const uint64_t want = 512 * (2688 * 4 + 24 * 34) + 4 * 512 * 4 + 8 * 512 * 4;
  EXPECT_EQ(activation_bytes(s.config, 512, 4, 512), want);
  EXPECT_EQ(want, 5947392u);
}

TEST(MakePlan, BreakdownAndBoundsMatchHandComputation) {
  const auto s = synth_llama();
  PlanRequest r;
  r.context_length = 512;
  r.concurrency = 4;
  auto p = make_plan(s.config, s.tensors, test_device(1ull << 30), r);
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_EQ(p->kv_bytes_per_token, 512u);
  EXPECT_EQ(p->memory.weights_bytes, 1885184u);
  EXPECT_EQ(p->memory.kv_bytes, 4u * 512 * 512);
  EXPECT_EQ(p->memory.activation_bytes, 5947392u);
  EXPECT_EQ(p->memory.overhead_bytes, 0u);
  EXPECT_EQ(p->memory.total_bytes, 1885184u + 4 * 512 * 512 + 5947392u);
  EXPECT_TRUE(p->memory.fits);
  EXPECT_EQ(p->max_context_at_concurrency, 512);  // the model's own limit
  // (2^30 - weights - activations with 512 logit rows) / (512 tokens × 512 B): 4062 sequences.
  EXPECT_EQ(p->max_concurrency_at_context, (1073741824 - 1885184 - (5922816 + 512 * 512 * 4 + 16384)) / 262144);
  EXPECT_EQ(p->max_concurrency_at_context, 4062);

  // Decode: the weights once (one embedding row of 272 B) plus each stream's 512 × 512 B of KV, at 100 GB/s.
  const double step_bytes = (1885184.0 - 139264 + 272) + 4 * 262144.0;
  EXPECT_DOUBLE_EQ(p->bounds.decode_step_bytes, step_bytes);
  EXPECT_FALSE(p->bounds.decode_compute_bound);
  EXPECT_DOUBLE_EQ(p->bounds.decode_tps_per_stream, 100e9 / step_bytes);
  EXPECT_DOUBLE_EQ(p->bounds.decode_tps_aggregate, 4 * 100e9 / step_bytes);
  EXPECT_DOUBLE_EQ(p->bounds.decode_tps_single, 100e9 / (1885184.0 - 139264 + 272 + 262144));
  // Prefill of 512 tokens (one chunk) on 1000 TOP/s int8 units takes less than reading the weights once.
  EXPECT_DOUBLE_EQ(p->bounds.ops_per_second, 1000e12);
  EXPECT_DOUBLE_EQ(p->bounds.prefill_seconds, (1885184.0 - 139264 + 272) / 100e9);
  EXPECT_FALSE(p->bounds.prefill_compute_bound);

  // The server's pool on this budget: room for far more, capped at 4 sequences × 32 blocks of 16 tokens.
  ASSERT_TRUE(p->kv_pool.ok());
  EXPECT_EQ(p->kv_pool->n_blocks, 4 * 32);
  EXPECT_EQ(p->kv_pool->n_token_slots, 4 * 512);
  EXPECT_EQ(p->to_fit, "");
}

// Short of memory, the server still starts while one sequence fits: it gets every block the budget leaves room for,
// and the plan says what would fit the requested concurrency.
TEST(MakePlan, ServerPoolTakesTheRoomWhenTheConcurrencyDoesNotFit) {
  const auto s = synth_llama();
  PlanRequest r;
  r.context_length = 512;
  r.concurrency = 64;
  // Activations at 64 logit rows: 512 × (2688 × 4 + 24 × 34) + 64 × 512 × 4 + 8 × 512 × 4 = 6070272 B.
  auto p = make_plan(s.config, s.tensors, test_device(16u << 20), r);
  ASSERT_TRUE(p.ok());
  EXPECT_FALSE(p->memory.fits);
  ASSERT_TRUE(p->kv_pool.ok()) << p->kv_pool.error().message;
  EXPECT_EQ(p->kv_pool->n_blocks, ((16 << 20) - 1885184 - 6070272) / 8192);
  EXPECT_EQ(p->kv_pool->n_blocks, 1076);
  EXPECT_EQ(p->kv_pool->max_concurrency_at_max_len, 33);
  EXPECT_EQ(p->max_concurrency_at_context, 33);
  EXPECT_EQ(p->to_fit,
            "context 512 × concurrency 64 needs 16.0 MiB of KV cache but only 8.4 MiB is left after 1.8 MiB of weights, "
            "5.8 MiB of activations and 0 B of runtime overhead in a budget of 16.0 MiB; lower --context to 256, or "
            "lower --concurrency to 33, or raise --mem-gb to at least 23.6 MiB");
}

// `--draft-model`: the model as its own draft doubles the weights and the KV bytes of every token slot.
TEST(MakePlan, ADraftModelsWeightsAndKvPoolAreCounted) {
  const auto s = synth_llama();
  PlanRequest r;
  r.context_length = 512;
  r.concurrency = 64;
  auto draft = draft_model_spec(s.config, s.tensors, DType::F16);
  ASSERT_TRUE(draft.ok());
  EXPECT_EQ(draft->weights.total_bytes, 1885184u);
  EXPECT_EQ(draft->kv_bytes_per_token, 512u);
  r.draft = *draft;
  auto p = make_plan(s.config, s.tensors, test_device(16u << 20), r);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->memory.weights_bytes, 1885184u);  // the model's own line
  EXPECT_EQ(p->memory.draft_weights_bytes, 1885184u);
  EXPECT_EQ(p->memory.draft_kv_bytes, p->memory.kv_bytes);
  EXPECT_EQ(p->memory.total_bytes, 2 * (1885184u + p->memory.kv_bytes) + 6070272u);
  ASSERT_TRUE(p->kv_pool.ok()) << p->kv_pool.error().message;
  EXPECT_EQ(p->kv_pool->n_blocks, ((16 << 20) - 2 * 1885184 - 6070272) / (2 * 8192));
  EXPECT_EQ(p->kv_pool->n_blocks, 423);
  // Each sequence of 512 tokens takes 2 x 256 KiB of KV: 13 fit beside both models' weights.
  EXPECT_EQ(p->kv_pool->max_concurrency_at_max_len, 13);
  EXPECT_EQ(p->max_concurrency_at_context, 13);
}

TEST(MakePlan, DecodeBecomesComputeBoundAtHighConcurrency) {
  const auto s = synth_llama();
  DeviceSpec d = test_device(1ull << 30);
  d.int8_tops = 0.001;  // 1 GOP/s
  PlanRequest r;
  r.context_length = 16;
  r.concurrency = 64;
  auto p = make_plan(s.config, s.tensors, d, r);
  ASSERT_TRUE(p.ok());
  EXPECT_TRUE(p->bounds.decode_compute_bound);
  const double flops_per_token = 2.0 * 1638400 + 4.0 * 2 * 256 * 16;
  EXPECT_DOUBLE_EQ(p->bounds.decode_tps_aggregate, 1e9 / flops_per_token);
  // Prefill of 16 tokens: 2 × 1638400 × 16 matmul FLOPs + 2 × 2 layers × 256 × 16² attention.
  const double prefill_flops = 2.0 * 1638400 * 16 + 2.0 * 2 * 256 * 16 * 16;
  EXPECT_TRUE(p->bounds.prefill_compute_bound);
  EXPECT_DOUBLE_EQ(p->bounds.prefill_seconds, prefill_flops / 1e9);
  EXPECT_DOUBLE_EQ(p->bounds.prefill_tps, 16 / (prefill_flops / 1e9));
}

// The limits are the exact boundary: one more block of context, or one more sequence, does not fit.
TEST(MakePlan, LimitsAreTheFitBoundary) {
  const auto s = synth_llama();
  model::ModelConfig long_ctx = s.config;
  long_ctx.context_length = 1 << 20;
  const DeviceSpec d = test_device(64ull << 20);
  PlanRequest r;
  r.context_length = 4096;
  r.concurrency = 3;
  auto p = make_plan(long_ctx, s.tensors, d, r);
  ASSERT_TRUE(p.ok());
  const int max_l = p->max_context_at_concurrency;
  ASSERT_GT(max_l, 0);
  EXPECT_EQ(max_l % 16, 0);
  auto at = [&](int l, int c) {
    PlanRequest q = r;
    q.context_length = l;
    q.concurrency = c;
    auto pq = make_plan(long_ctx, s.tensors, d, q);
    EXPECT_EQ(pq->memory.fits, pq->to_fit.empty());  // the fit check and the server's sizing agree
    EXPECT_TRUE(pq->kv_pool.ok());  // one sequence fits: the server starts, with fewer blocks if need be
    return pq->memory.fits;
  };
  EXPECT_TRUE(at(max_l, 3));
  EXPECT_FALSE(at(max_l + 16, 3));
  const int max_c = p->max_concurrency_at_context;
  ASSERT_GT(max_c, 0);
  EXPECT_TRUE(at(4096, max_c));
  EXPECT_FALSE(at(4096, max_c + 1));
}

TEST(MakePlan, DoesNotFitSaysWhy) {
  const auto s = synth_llama();
  PlanRequest r;
  r.context_length = 512;
  r.concurrency = 1;
  auto p = make_plan(s.config, s.tensors, test_device(1u << 20), r);  // 1 MiB: less than the weights
  ASSERT_TRUE(p.ok());
  EXPECT_FALSE(p->memory.fits);
  EXPECT_EQ(p->max_context_at_concurrency, 0);
  EXPECT_EQ(p->max_concurrency_at_context, 0);
  ASSERT_FALSE(p->kv_pool.ok());
  EXPECT_NE(p->kv_pool.error().message.find("raise --mem-gb to at least"), std::string::npos)
      << p->kv_pool.error().message;
}

TEST(MakePlan, ContextZeroMeansTheModels) {
  const auto s = synth_llama();
  auto p = make_plan(s.config, s.tensors, test_device(1ull << 30), PlanRequest{});
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->request.context_length, 512);
}

TEST(MakePlan, Llama70bOnH100NeedsTwoOrQuantization) {
  const auto c = find_preset("llama-3-70b")->config;
  PlanRequest r;
  r.context_length = 8192;
  auto h100 = find_device("h100-sxm");
  ASSERT_TRUE(h100.ok());
  auto bf16 = make_plan(c, standard_tensors(c, DType::BF16), *h100, r);
  ASSERT_TRUE(bf16.ok());
  EXPECT_FALSE(bf16->memory.fits);  // 141 GB of weights
  auto q4 = make_plan(c, standard_tensors(c, DType::Q4_K), *h100, r);
  ASSERT_TRUE(q4.ok());
  EXPECT_TRUE(q4->memory.fits);  // ~40 GB
  // 3350 GB/s over ~40 GB read per token: a few tens of tokens/s.
  EXPECT_GT(q4->bounds.decode_tps_single, 70.0);
  EXPECT_LT(q4->bounds.decode_tps_single, 90.0);
}

TEST(DeviceCatalog, HasTheRequiredDevicesAndFindIsForgiving) {
  for (const char* name : {"h200", "h100-sxm", "h100-pcie", "a100-40gb", "a100-80gb", "l40s", "rtx-4090",
                           "rtx-3090", "mi300x", "m2-max", "m2-ultra", "m3-max", "m3-ultra", "m4-max"}) {
    auto d = find_device(name);
    ASSERT_TRUE(d.ok()) << name;
    EXPECT_GT(d->memory_bytes, 0u);
    EXPECT_GT(d->bandwidth_gbs, 0);
    EXPECT_GT(d->bf16_tflops, 0);
    EXPECT_GT(d->int8_tops, 0);
    EXPECT_GT(d->usable_fraction, 0.5);
    EXPECT_LE(d->usable_fraction, 1.0);
  }
  EXPECT_TRUE(find_device("H100_SXM").ok());
  EXPECT_TRUE(find_device("m3-max")->unified_memory);
  EXPECT_FALSE(find_device("h200")->unified_memory);
  auto bad = find_device("tpu");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("known devices: cpu, h200"), std::string::npos) << bad.error().message;
}

TEST(DeviceCatalog, CpuDeviceFromMeasurement) {
  CpuMeasurement m;
  m.mem_available_bytes = 20ull << 30;
  m.bandwidth_gbs = 31;
  m.int8_tops = 15;
  m.bf16_tflops = 7;
  m.n_threads = 2;
  const DeviceSpec d = cpu_device(m);
  EXPECT_EQ(d.name, "cpu");
  EXPECT_TRUE(d.measured);
  EXPECT_EQ(d.memory_bytes, 20ull << 30);
  EXPECT_EQ(d.usable_bytes(), static_cast<uint64_t>((20ull << 30) * 0.9));
  EXPECT_EQ(d.bandwidth_gbs, 31);
}
}  // namespace
}  // namespace kairo::plan
