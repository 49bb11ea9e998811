// Sizing the KV pool from a budget, and the refusal messages the server prints.
#include <gtest/gtest.h>

#include "gguf/gguf_file.h"
#include "model/config.h"
#include "plan/kv_sizing.h"
#include "plan/memory_plan.h"
#include "plan/device_catalog.h"
#include "plan/model_presets.h"
#include "plan/model_shapes.h"

namespace kairo::plan {
namespace {

model::ModelConfig synth_llama_config() {
  auto file = gguf::File::open(std::string(KAIRO_SHARED_DIR) + "/models/synth-llama-gqa.Q8_0.gguf");
  EXPECT_TRUE(file.ok());
  auto config = model::read_config(*file);
  EXPECT_TRUE(config.ok());
  return *config;
}

constexpr uint64_t kSynthWeights = 1885184;  // see weights_test.cpp

TEST(KvSizing, BytesPerTokenByDtype) {
  const auto c = synth_llama_config();
  // 2 (K and V) × 2 layers × 2 KV heads × 32 values.
  EXPECT_EQ(kv_bytes_per_token(c, DType::F16).value(), 2u * 2 * 2 * 32 * 2);
  EXPECT_EQ(kv_bytes_per_token(c, DType::BF16).value(), 2u * 2 * 2 * 32 * 2);
  EXPECT_EQ(kv_bytes_per_token(c, DType::Q8_0).value(), 2u * 2 * 2 * 34);
  // llama-3-8b in f16: 2 × 32 layers × 1024 × 2 bytes = 128 KiB per token.
  EXPECT_EQ(kv_bytes_per_token(find_preset("llama-3-8b")->config, DType::F16).value(), 131072u);
}

TEST(KvSizing, Q8_0NeedsHeadSizeMultipleOf32) {
  model::ModelConfig c = synth_llama_config();
  c.head_dim = 16;
  auto r = kv_bytes_per_token(c, DType::Q8_0);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message,
            "--kv-dtype Q8_0 stores blocks of 32 values but this model's head size is 16; use f16 or bf16");
}

TEST(KvSizing, PoolTakesEveryWholeBlockTheBudgetLeaves) {
  KvPoolRequest r;
  r.budget_bytes = 4u << 20;
  r.weights_bytes = kSynthWeights;
  r.max_model_len = 512;
  auto s = size_kv_pool(synth_llama_config(), r);
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ(s->bytes_per_block, 16u * 512);
  EXPECT_EQ(s->n_blocks, ((4 << 20) - 1885184) / 8192);  // 281
  EXPECT_EQ(s->n_blocks, 281);
  EXPECT_EQ(s->kv_bytes, 281u * 8192);
  EXPECT_EQ(s->n_token_slots, 281 * 16);
  EXPECT_EQ(s->blocks_per_sequence, 32);
  EXPECT_EQ(s->max_concurrency_at_max_len, 8);
}

TEST(KvSizing, PartialBlockRoundsUp) {
  KvPoolRequest r;
  r.budget_bytes = 4u << 20;
  r.weights_bytes = kSynthWeights;
  r.max_model_len = 17;  // two blocks of 16
  auto s = size_kv_pool(synth_llama_config(), r);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->blocks_per_sequence, 2);
  EXPECT_EQ(s->max_concurrency_at_max_len, 140);
}

TEST(KvSizing, RefusalNamesEveryKnobAndTheValueThatFits) {
  KvPoolRequest r;
  r.budget_bytes = 4u << 20;
  r.weights_bytes = kSynthWeights;
  r.max_model_len = 512;
  r.min_concurrency = 16;  // 16 × 32 blocks × 8 KiB = 4 MiB
  auto s = size_kv_pool(synth_llama_config(), r);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message,
            "context 512 × concurrency 16 needs 4.0 MiB of KV cache but only 2.2 MiB is left after 1.8 MiB of weights "
            "in a budget of 4.0 MiB; lower --max-model-len to 272, or lower --max-num-seqs to 8, or use --kv-dtype "
            "q8_0 (2.1 MiB of KV cache), or raise --mem-budget-gb to at least 5.8 MiB");
  // The suggested values do fit.
  KvPoolRequest shorter = r;
  shorter.max_model_len = 272;
  EXPECT_TRUE(size_kv_pool(synth_llama_config(), shorter).ok());
  KvPoolRequest fewer = r;
  fewer.min_concurrency = 8;
  EXPECT_TRUE(size_kv_pool(synth_llama_config(), fewer).ok());
  KvPoolRequest q8 = r;
  q8.kv_dtype = DType::Q8_0;
  EXPECT_TRUE(size_kv_pool(synth_llama_config(), q8).ok());
  KvPoolRequest bigger = r;
  bigger.budget_bytes = 6079488;
  EXPECT_TRUE(size_kv_pool(synth_llama_config(), bigger).ok());
  bigger.budget_bytes -= 1;
  EXPECT_FALSE(size_kv_pool(synth_llama_config(), bigger).ok());
}

TEST(KvSizing, BudgetKnobIsScaledToTheDeviceMemory) {
  KvPoolRequest r;
  r.budget_bytes = 4u << 20;
  r.weights_bytes = kSynthWeights;
  r.max_model_len = 512;
  r.min_concurrency = 16;
  r.knobs.budget = "--mem-gb";
  r.knobs.budget_scale = 0.5;  // half the device's memory is usable: it needs twice the budget
  auto s = size_kv_pool(synth_llama_config(), r);
  ASSERT_FALSE(s.ok());
  const std::string& m = s.error().message;
  EXPECT_EQ(m.substr(m.find("raise")), "raise --mem-gb to at least 11.6 MiB");  // 2 × 6079488 B
}

TEST(KvSizing, RefusalWhenWeightsAloneDoNotFit) {
  const auto c = find_preset("llama-3-8b")->config;
  KvPoolRequest r;
  r.budget_bytes = 8ull << 30;
  r.weights_bytes = 8030261248ull * 2;  // bf16
  r.overhead_bytes = 1ull << 30;
  r.max_model_len = 8192;
  r.knobs.budget = "--mem-gb";
  auto s = size_kv_pool(c, r);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message,
            "the weights (15.0 GiB), activations (0 B) and runtime overhead (1.0 GiB) need 16.0 GiB, more than the "
            "budget of 8.0 GiB, leaving nothing for the KV cache; raise --mem-gb to at least 17.0 GiB, or quantize "
            "the model so its weights take at most 6.0 GiB (now 15.0 GiB; q8_0 is ~8.5 bits a weight, q4_k ~4.5)");
  // A budget that not even the overhead and one context of KV fit: no quantization can help, so none is suggested.
  r.budget_bytes = 1ull << 30;
  auto tiny = size_kv_pool(c, r);
  ASSERT_FALSE(tiny.ok());
  EXPECT_EQ(tiny.error().message.find("quantize"), std::string::npos) << tiny.error().message;
}

TEST(KvSizing, BadRequestIsAnErrorNotACrash) {
  KvPoolRequest r;
  r.budget_bytes = 1u << 30;
  r.max_model_len = 0;
  EXPECT_FALSE(size_kv_pool(synth_llama_config(), r).ok());
  r.max_model_len = 16;
  r.block_size = 0;
  EXPECT_FALSE(size_kv_pool(synth_llama_config(), r).ok());
}

TEST(KvSizing, PoolStopsAtMaxSequences) {
  KvPoolRequest r;
  r.budget_bytes = 4u << 20;
  r.weights_bytes = kSynthWeights;
  r.max_model_len = 512;
  r.max_sequences = 3;  // room for 281 blocks, a full batch uses 3 × 32
  auto s = size_kv_pool(synth_llama_config(), r);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->n_blocks, 96);
  EXPECT_EQ(s->n_token_slots, 1536);
  EXPECT_EQ(s->kv_bytes, 96u * 8192);
  EXPECT_EQ(s->max_concurrency_at_max_len, 3);
  r.max_sequences = 100;  // the budget binds first
  EXPECT_EQ(size_kv_pool(synth_llama_config(), r)->n_blocks, 281);
}

// `kairo serve --kv-cache-memory`: a budget for the KV cache alone, so the message does not talk about weights.
TEST(KvSizing, KvOnlyBudgetRefusal) {
  KvPoolRequest r;
  r.budget_bytes = 3u << 20;
  r.weights_bytes = kSynthWeights;
  r.activation_bytes = 1000;
  r.max_model_len = 512;
  r.max_sequences = 64;
  r.knobs.budget = "--kv-cache-memory";
  const KvPoolRequest kv_only = kv_cache_budget_request(r, 144u << 10);  // 18 blocks of 8 KiB
  EXPECT_EQ(kv_only.budget_bytes, 144u << 10);
  EXPECT_EQ(kv_only.weights_bytes + kv_only.activation_bytes + kv_only.overhead_bytes, 0u);
  EXPECT_EQ(kv_only.max_sequences, 0);
  auto s = size_kv_pool(synth_llama_config(), kv_only);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message,
            "context 512 × concurrency 1 needs 256.0 KiB of KV cache but the KV cache budget is 144.0 KiB; lower "
            "--max-model-len to 288, or use --kv-dtype q8_0 (136.0 KiB of KV cache), or raise --kv-cache-memory to "
            "at least 256.0 KiB");
  // Enough for one sequence: exactly the blocks the budget holds, no cap.
  auto fits = size_kv_pool(synth_llama_config(), kv_cache_budget_request(r, 1u << 20));
  ASSERT_TRUE(fits.ok());
  EXPECT_EQ(fits->n_blocks, 128);
}

}  // namespace
}  // namespace kairo::plan

namespace kairo::plan {
namespace {

// gemma-3-1b: 26 layers, 1 KV head of 256, window 512; layers 5, 11, 17, 23 are global, the other 22 windowed.
TEST(KvSizing, SlidingWindowLayersGetAPoolBoundedByTheirWindow) {
  const model::ModelConfig c = find_preset("gemma-3-1b")->config;
  ASSERT_EQ(c.sliding_window, 512);
  ASSERT_EQ(c.n_windowed_layers(), 22);
  const uint64_t per_layer = 2u * 256 * 2;  // K and V, one head of 256 in f16
  EXPECT_EQ(window_kv_bytes_per_token(c, kv_bytes_per_token(c, DType::F16).value()), 22 * per_layer);
  KvPoolRequest r;
  r.budget_bytes = 8ull << 30;
  r.max_model_len = 32768;
  r.max_sequences = 8;
  r.max_num_seqs = 8;
  r.max_batch_tokens = 512;
  auto s = size_kv_pool(c, r);
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ(s->bytes_per_block, 16u * 4 * per_layer);   // the 4 global layers
  EXPECT_EQ(s->window_bytes_per_block, 16u * 22 * per_layer);
  EXPECT_EQ(s->n_window_blocks, 8 * (32 + 3) + 32);    // kv::window_group_blocks(512, 16, 8, 512)
  EXPECT_EQ(s->n_blocks, 8 * 2048);                     // 8 sequences of 32k in the global layers
  EXPECT_EQ(s->kv_bytes, 8u * 2048 * s->bytes_per_block + 312u * s->window_bytes_per_block);
  // Keeping every layer's whole context would need 26 / 4 = 6.5x the global layers' bytes: 6.5 GiB instead of
  // 1.0 + 0.1 GiB.
  EXPECT_LT(s->kv_bytes, (13ull << 30) / 10);

  // A budget too small for one sequence of 32k counts the windowed pool as placed first.
  r.budget_bytes = 200ull << 20;
  auto refused = size_kv_pool(c, r);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("of sliding-window KV"), std::string::npos) << refused.error().message;
}

TEST(MemoryPlan, WindowedLayersCountOnlyTheirWindowAtLongContexts) {
  const auto p = find_preset("gemma-3-1b");
  ASSERT_TRUE(p.ok());
  PlanRequest req;
  req.context_length = 32768;
  req.concurrency = 4;
  const DeviceSpec device = *find_device("h100-sxm");
  auto plan = make_plan(p->config, standard_tensors(p->config, DType::Q8_0), device, req);
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  const uint64_t per_layer = 2u * 256 * 2;
  const uint64_t windowed = static_cast<uint64_t>(4 * (32 + 3) + 32) * 16 * 22 * per_layer;
  EXPECT_EQ(plan->memory.kv_bytes, 4ull * 32768 * 4 * per_layer + windowed);
}

}  // namespace
}  // namespace kairo::plan
