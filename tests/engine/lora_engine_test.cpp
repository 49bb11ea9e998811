// LoRA adapters in the engine: mixed-adapter batches give each request exactly its tokens alone (temperature 0), and
// the prefix cache never serves KV computed under one adapter to a request of another.
#include <gtest/gtest.h>

#include <cstdio>

#include "convert/lora/synth_adapter.h"
#include "engine/engine.h"
#include "engine/engine_test_support.h"
#include "model/lora/adapter.h"

namespace kairo::engine {
namespace {

using testing::Finished;
using testing::run_requests;

constexpr const char* kBase = "synth-llama-gqa.Q8_0.gguf";

std::string make_adapter(int seed, float strength) {
  const std::string path = ::testing::TempDir() + "/kairo_lora_engine_" + std::to_string(seed) + ".gguf";
  convert::AdapterSynthOptions o;
  o.rank = 8;
  o.seed = static_cast<uint64_t>(seed);
  o.strength = strength;
  auto r = convert::write_synth_adapter(kairo::testing::shared_path(std::string("models/") + kBase), path, o);
  EXPECT_TRUE(r.ok()) << r.error().message;
  return path;
}

// The base model with adapters 1..4 (seeds 1..4), and adapter 5: adapter 1's file again, at another scale.
struct LoraFixture {
  testing::LoadedModel loaded = testing::load_shared_model(kBase);
  std::vector<std::string> files;
  LoraFixture() {
    for (int seed = 1; seed <= 4; ++seed) files.push_back(make_adapter(seed, 0.5f));
    for (int i = 0; i < 5; ++i) {
      model::lora::LoadOptions o;
      o.scale = i < 4 ? 1.0f : 0.5f;
      auto a = model::lora::load_adapter(files[static_cast<size_t>(i % 4)], loaded.model->file(),
                                         loaded.model->config(), o);
      EXPECT_TRUE(a.ok()) << a.error().message;
      auto idx = loaded.model->add_adapter(*a);
      EXPECT_TRUE(idx.ok() && *idx == i + 1);
    }
  }
  ~LoraFixture() {
    for (const auto& f : files) std::remove(f.c_str());
  }
};

LoraFixture& fixture() {
  static LoraFixture f;
  return f;
}

std::unique_ptr<Engine> make_engine() {
  EngineConfig cfg;
  cfg.n_threads = 2;
  auto e = Engine::create(*fixture().loaded.model, *fixture().loaded.tokenizer, cfg);
  EXPECT_TRUE(e.ok()) << e.error().message;
  return e.ok() ? std::move(*e) : nullptr;
}

// 16 greedy requests over adapters 1-4 and the base, in one engine, give each request's tokens alone.
TEST(LoraEngine, MixedAdapterBatchEqualsEachRequestAlone) {
  std::vector<Request> reqs = testing::mixed_requests(16, 12, 77);
  for (size_t i = 0; i < reqs.size(); ++i) reqs[i].adapter = static_cast<int>(i % 5);  // 0: the base
  std::vector<Finished> alone;
  for (const Request& r : reqs) {
    auto engine = make_engine();  // a fresh prefix cache: nothing shared with the other requests
    alone.push_back(run_requests(*engine, {r})[0]);
  }
  auto engine = make_engine();
  const std::vector<Finished> together = run_requests(*engine, reqs);
  for (size_t i = 0; i < reqs.size(); ++i) {
    EXPECT_EQ(together[i].tokens, alone[i].tokens) << "request " << i << " (adapter " << reqs[i].adapter << ")";
    EXPECT_EQ(together[i].tokens.size(), 12u);
  }
  // The adapters act: the same prompt under each of the five gives at least three different continuations.
  std::vector<Request> same(5, reqs[9]);
  for (int a = 0; a < 5; ++a) same[static_cast<size_t>(a)].adapter = a;
  const std::vector<Finished> outs = run_requests(*make_engine(), same);
  int n_distinct = 0;
  for (size_t a = 0; a < outs.size(); ++a) {
    bool seen = false;
    for (size_t b = 0; b < a; ++b) seen |= outs[a].tokens == outs[b].tokens;
    n_distinct += seen ? 0 : 1;
  }
  EXPECT_GE(n_distinct, 3);
}

TEST(LoraEngine, PrefixCacheIsKeyedByAdapter) {
  Request r = testing::mixed_requests(12, 6, 5)[8];  // a 100-token prompt: six full blocks
  ASSERT_GE(r.prompt_tokens.size(), 64u);
  auto engine = make_engine();
  auto run_with = [&](int adapter) {
    Request q = r;
    q.adapter = adapter;
    return run_requests(*engine, {q})[0];
  };
  const Finished first = run_with(1);
  EXPECT_EQ(first.n_cached, 0);
  const Finished other = run_with(2);  // same prompt, another adapter: nothing cached for it
  EXPECT_EQ(other.n_cached, 0);
  const Finished base = run_with(0);   // nor for the base
  EXPECT_EQ(base.n_cached, 0);
  const Finished other_scale = run_with(5);  // adapter 1's file at another scale: another identity
  EXPECT_EQ(other_scale.n_cached, 0);
  const Finished again = run_with(1);  // adapter 1 again: its own prefix is served
  EXPECT_GT(again.n_cached, 0);
  EXPECT_EQ(again.tokens, first.tokens);
  // What each was served equals what it gets on a fresh engine.
  for (auto [adapter, got] : {std::pair{2, &other}, std::pair{0, &base}, std::pair{5, &other_scale}}) {
    Request q = r;
    q.adapter = adapter;
    EXPECT_EQ(run_requests(*make_engine(), {q})[0].tokens, got->tokens) << "adapter " << adapter;
  }
}

TEST(LoraEngine, UnknownAdapterIsRefused) {
  auto engine = make_engine();
  Request r = testing::mixed_requests(1, 2)[0];
  r.adapter = 6;
  auto result = engine->submit(r, [](const RequestOutput&) {});
  ASSERT_TRUE(std::holds_alternative<SubmitRejection>(result));
  EXPECT_EQ(std::get<SubmitRejection>(result).kind, SubmitError::Invalid);
  EXPECT_EQ(std::get<SubmitRejection>(result).message, "LoRA adapter 6 is not loaded (5 are)");
}

}  // namespace
}  // namespace kairo::engine
