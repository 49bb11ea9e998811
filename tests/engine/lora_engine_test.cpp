// LoRA adapters in the engine: mixed-adapter batches give each request exactly its tokens alone (temperature 0), the
// prefix cache never serves KV computed under one adapter to a request of another, a per-request scale is the same
// file loaded at that scale, and adapters load and unload while the engine serves (ids reused, never renumbered).
#include <gtest/gtest.h>

#include <condition_variable>
#include <cstdio>
#include <mutex>

#include <unistd.h>

#include "convert/lora/synth_adapter.h"
#include "engine/engine.h"
#include "engine/engine_test_support.h"
#include "core/format.h"
#include "model/lora/adapter.h"
#include "model/lora/lora_set.h"

namespace kairo::engine {
namespace {

using testing::Finished;
using testing::run_requests;

constexpr const char* kBase = "synth-llama-gqa.Q8_0.gguf";

std::string make_adapter(int seed, float strength) {
  // The process id in the name: ctest runs each test in its own process, several at once.
  const std::string path = ::testing::TempDir() + "/kairo_lora_engine_" + std::to_string(::getpid()) + "_" +
                           std::to_string(seed) + ".gguf";
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

LoraFixture& lora_fixture() {
  static LoraFixture f;
  return f;
}

std::unique_ptr<Engine> make_lora_engine() {
  EngineConfig cfg;
  cfg.n_threads = 2;
  auto e = Engine::create(*lora_fixture().loaded.model, *lora_fixture().loaded.tokenizer, cfg);
  EXPECT_TRUE(e.ok()) << e.error().message;
  return e.ok() ? std::move(*e) : nullptr;
}

// 16 greedy requests over adapters 1-4 and the base, in one engine, give each request's tokens alone.
TEST(LoraEngine, MixedAdapterBatchEqualsEachRequestAlone) {
  std::vector<Request> reqs = testing::mixed_requests(16, 12, 77);
  for (size_t i = 0; i < reqs.size(); ++i) reqs[i].adapter = static_cast<int>(i % 5);  // 0: the base
  std::vector<Finished> alone;
  for (const Request& r : reqs) {
    auto engine = make_lora_engine();  // a fresh prefix cache: nothing shared with the other requests
    alone.push_back(run_requests(*engine, {r})[0]);
  }
  auto engine = make_lora_engine();
  const std::vector<Finished> together = run_requests(*engine, reqs);
  for (size_t i = 0; i < reqs.size(); ++i) {
    EXPECT_EQ(together[i].tokens, alone[i].tokens) << "request " << i << " (adapter " << reqs[i].adapter << ")";
    EXPECT_EQ(together[i].tokens.size(), 12u);
  }
  // The adapters act: the same prompt under each of the five gives at least three different continuations.
  std::vector<Request> same(5, reqs[9]);
  for (int a = 0; a < 5; ++a) same[static_cast<size_t>(a)].adapter = a;
  const std::vector<Finished> outs = run_requests(*make_lora_engine(), same);
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
  auto engine = make_lora_engine();
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
    EXPECT_EQ(run_requests(*make_lora_engine(), {q})[0].tokens, got->tokens) << "adapter " << adapter;
  }
}

TEST(LoraEngine, UnknownAdapterIsRefused) {
  auto engine = make_lora_engine();
  Request r = testing::mixed_requests(1, 2)[0];
  r.adapter = 6;
  auto result = engine->submit(r, [](const RequestOutput&) {});
  ASSERT_TRUE(std::holds_alternative<SubmitRejection>(result));
  EXPECT_EQ(std::get<SubmitRejection>(result).kind, SubmitError::Invalid);
  EXPECT_EQ(std::get<SubmitRejection>(result).message, "LoRA adapter 6 is not loaded (5 are)");
}


// A per-request scale runs the adapter exactly as if its file were loaded at that scale, and shares that adapter's
// prefix-cache entries; scale 0 is the base, the loaded scale the adapter itself.
TEST(LoraEngine, PerRequestScaleIsTheFileLoadedAtThatScale) {
  Request r = testing::mixed_requests(12, 6, 5)[8];  // a 100-token prompt: six full blocks
  auto engine = make_lora_engine();
  auto run_with = [&](int adapter, std::optional<float> scale) {
    Request q = r;
    q.adapter = adapter;
    q.adapter_scale = scale;
    return run_requests(*engine, {q})[0];
  };
  const Finished loaded_half = run_with(5, std::nullopt);  // adapter 1's file, loaded at 0.5
  const Finished asked_half = run_with(1, 0.5f);
  EXPECT_EQ(asked_half.tokens, loaded_half.tokens);
  EXPECT_GT(asked_half.n_cached, 0) << "the same file at the same scale shares KV";
  const Finished asked_one = run_with(1, 1.0f);  // the loaded scale: adapter 1 itself
  EXPECT_EQ(asked_one.n_cached, 0);
  EXPECT_EQ(asked_one.tokens, run_requests(*make_lora_engine(), {[&] {
                                Request q = r;
                                q.adapter = 1;
                                return q;
                              }()})[0]
                                  .tokens);
  EXPECT_NE(asked_one.tokens, asked_half.tokens);
  const Finished asked_zero = run_with(1, 0.0f);
  EXPECT_EQ(asked_zero.tokens, run_requests(*make_lora_engine(), {r})[0].tokens);
  // Two scales of one adapter in one batch, next to the adapter itself: each as alone.
  std::vector<Request> mixed(3, r);
  mixed[0].adapter = 2, mixed[0].adapter_scale = 0.25f;
  mixed[1].adapter = 2, mixed[1].adapter_scale = 2.0f;
  mixed[2].adapter = 2;
  const std::vector<Finished> together = run_requests(*make_lora_engine(), mixed);
  for (size_t i = 0; i < mixed.size(); ++i) {
    EXPECT_EQ(together[i].tokens, run_requests(*make_lora_engine(), {mixed[i]})[0].tokens) << "request " << i;
  }
  EXPECT_NE(together[0].tokens, together[1].tokens);
  // Scaled copies are freed with their last request: only the five adapters remain.
  EXPECT_EQ(lora_fixture().loaded.model->adapters().n_in_use(), 5);

  Request bad = r;
  bad.adapter = 1;
  bad.adapter_scale = -1.0f;
  auto refused = engine->submit(bad, [](const RequestOutput&) {});
  ASSERT_TRUE(std::holds_alternative<SubmitRejection>(refused));
  EXPECT_EQ(std::get<SubmitRejection>(refused).message, "the LoRA scale -1 is not a finite number >= 0");
}

// An engine over its own copy of the base model (loads stay in the model), taking up to two adapters.
struct RuntimeLora {
  testing::LoadedModel loaded = testing::load_shared_model(kBase);
  std::unique_ptr<Engine> engine;
  RuntimeLora() {
    EngineConfig cfg;
    cfg.n_threads = 2;
    cfg.max_loras = 2;
    auto e = Engine::create(*loaded.model, *loaded.tokenizer, cfg);
    EXPECT_TRUE(e.ok()) << e.error().message;
    if (e.ok()) engine = std::move(*e);
  }
  LoadedAdapter load(const std::string& path) {
    auto r = engine->load_adapter(path, 1.0f);
    if (const auto* refusal = std::get_if<AdapterRefusal>(&r)) ADD_FAILURE() << refusal->message;
    return std::holds_alternative<LoadedAdapter>(r) ? std::get<LoadedAdapter>(r) : LoadedAdapter{};
  }
};

// What adapter `fixture_adapter` (1-4: files 1-4) of the shared fixture gives for r.
std::vector<int32_t> fixture_tokens(Request r, int fixture_adapter) {
  r.adapter = fixture_adapter;
  r.adapter_generation = 0;
  return run_requests(*make_lora_engine(), {r})[0].tokens;
}

TEST(LoraEngine, LoadAndUnloadWhileServingReuseIdsAndNeverShareKv) {
  const auto& files = lora_fixture().files;
  RuntimeLora rt;
  ASSERT_TRUE(rt.engine);
  Request r = testing::mixed_requests(12, 6, 5)[8];
  auto bad = rt.engine->load_adapter(kairo::testing::shared_path(std::string("models/") + kBase), 1.0f);
  ASSERT_TRUE(std::holds_alternative<AdapterRefusal>(bad));
  EXPECT_EQ(std::get<AdapterRefusal>(bad).kind, AdapterError::Invalid);
  EXPECT_NE(std::get<AdapterRefusal>(bad).message.find("this is not a LoRA adapter file"), std::string::npos)
      << std::get<AdapterRefusal>(bad).message;
  const LoadedAdapter first = rt.load(files[0]);
  EXPECT_EQ(first.id, 1);
  const LoadedAdapter second = rt.load(files[1]);
  EXPECT_EQ(second.id, 2);
  EXPECT_NE(first.generation, second.generation);
  auto full = rt.engine->load_adapter(files[2], 1.0f);
  ASSERT_TRUE(std::holds_alternative<AdapterRefusal>(full));
  EXPECT_EQ(std::get<AdapterRefusal>(full).kind, AdapterError::Full);

  Request q = r;
  q.adapter = first.id;
  q.adapter_generation = first.generation;
  const Finished under_first = run_requests(*rt.engine, {q})[0];
  EXPECT_EQ(under_first.tokens, fixture_tokens(r, 1));

  auto unloaded = rt.engine->unload_adapter(first.id, first.generation);
  ASSERT_TRUE(std::holds_alternative<int>(unloaded));
  EXPECT_EQ(std::get<int>(unloaded), 0);
  const LoadedAdapter third = rt.load(files[2]);  // the freed id, another file
  EXPECT_EQ(third.id, first.id);
  // A request for the old load is refused, not run under the new one.
  auto stale = rt.engine->submit(q, [](const RequestOutput&) {});
  ASSERT_TRUE(std::holds_alternative<SubmitRejection>(stale));
  EXPECT_EQ(std::get<SubmitRejection>(stale).message,
            "LoRA adapter 1 was unloaded since this request named it; the id now holds another adapter");
  // The same prompt in the same index: nothing of the old adapter's KV is served, and the output is the new one's.
  q.adapter_generation = third.generation;
  const Finished under_third = run_requests(*rt.engine, {q})[0];
  EXPECT_EQ(under_third.n_cached, 0);
  EXPECT_EQ(under_third.tokens, fixture_tokens(r, 3));
  EXPECT_NE(under_third.tokens, under_first.tokens);

  auto gone = rt.engine->unload_adapter(first.id, first.generation);
  ASSERT_TRUE(std::holds_alternative<AdapterRefusal>(gone));
  EXPECT_EQ(std::get<AdapterRefusal>(gone).kind, AdapterError::NotLoaded);
}

// Unloaded while a request runs with it: the request runs to its end under it, new ones are refused, and the id is
// free for a load once the request has finished.
TEST(LoraEngine, UnloadWhileARequestRunsFinishesItFirst) {
  const auto& files = lora_fixture().files;
  RuntimeLora rt;
  ASSERT_TRUE(rt.engine);
  const LoadedAdapter a = rt.load(files[0]);
  rt.load(files[1]);
  Request r = testing::mixed_requests(12, 12, 5)[4];
  r.adapter = a.id;
  r.adapter_generation = a.generation;

  std::mutex mutex;
  std::condition_variable cv;
  bool first_token = false, go_on = false, finished = false;
  std::vector<int32_t> tokens;
  auto id = rt.engine->submit(r, [&](const RequestOutput& o) {
    std::unique_lock<std::mutex> lock(mutex);
    for (const auto& t : o.tokens) tokens.push_back(t.token);
    if (!first_token) {  // hold the engine thread here, between two steps, until the adapter is unloaded
      first_token = true;
      cv.notify_all();
      cv.wait(lock, [&] { return go_on; });
    }
    if (o.finished) {
      finished = true;
      cv.notify_all();
    }
  });
  ASSERT_TRUE(std::holds_alternative<RequestId>(id));
  {
    std::unique_lock<std::mutex> lock(mutex);
    cv.wait(lock, [&] { return first_token; });
  }
  auto unloaded = rt.engine->unload_adapter(a.id, a.generation);
  ASSERT_TRUE(std::holds_alternative<int>(unloaded));
  EXPECT_EQ(std::get<int>(unloaded), 1);
  auto refused = rt.engine->submit(r, [](const RequestOutput&) {});
  ASSERT_TRUE(std::holds_alternative<SubmitRejection>(refused));
  EXPECT_EQ(std::get<SubmitRejection>(refused).message, "LoRA adapter 1 is being unloaded: it takes no new requests");
  auto full = rt.engine->load_adapter(files[2], 1.0f);  // still resident until its request ends
  ASSERT_TRUE(std::holds_alternative<AdapterRefusal>(full));
  EXPECT_EQ(std::get<AdapterRefusal>(full).kind, AdapterError::Full);
  {
    std::unique_lock<std::mutex> lock(mutex);
    go_on = true;
    cv.notify_all();
    cv.wait(lock, [&] { return finished; });
  }
  EXPECT_EQ(tokens, fixture_tokens(r, 1));
  EXPECT_EQ(rt.load(files[2]).id, a.id);  // freed with its last request
}

// Runs r to its end, unloading its adapter (a) while it runs: the engine thread is held in r's first output until
// the unload is in, so the adapter is freed by the request's end, not by the unload.
void run_and_unload_under_it(Engine& engine, Request r, const LoadedAdapter& a) {
  std::mutex mutex;
  std::condition_variable cv;
  bool first = false, go_on = false, finished = false;
  auto id = engine.submit(r, [&](const RequestOutput& o) {
    std::unique_lock<std::mutex> lock(mutex);
    if (!first) {
      first = true;
      cv.notify_all();
      cv.wait(lock, [&] { return go_on; });
    }
    if (o.finished) {
      finished = true;
      cv.notify_all();
    }
  });
  ASSERT_TRUE(std::holds_alternative<RequestId>(id));
  std::unique_lock<std::mutex> lock(mutex);
  cv.wait(lock, [&] { return first; });
  auto unloaded = engine.unload_adapter(a.id, a.generation);
  ASSERT_TRUE(std::holds_alternative<int>(unloaded));
  EXPECT_EQ(std::get<int>(unloaded), 1);
  go_on = true;
  cv.notify_all();
  cv.wait(lock, [&] { return finished; });
}

// Unloaded adapters give their device memory back (Device::free_matrices): 20 load/unload cycles, unloaded idle
// (freed between steps) or under a running request (freed when it ends), leave the device's bytes where they were.
TEST(LoraEngine, LoadUnloadCyclesDoNotGrowDeviceMemory) {
  const auto& files = lora_fixture().files;
  RuntimeLora rt;
  ASSERT_TRUE(rt.engine);
  const kernels::Device& dev = rt.loaded.model->device();
  const Request r = testing::mixed_requests(12, 3, 5)[2];
  std::vector<uint64_t> after_load, after_unload;
  for (int cycle = 0; cycle < 20; ++cycle) {
    const LoadedAdapter a = rt.load(files[static_cast<size_t>(cycle % 2)]);  // two files of the same size
    after_load.push_back(dev.bytes_in_use());
    Request q = r;
    q.adapter = a.id;
    q.adapter_generation = a.generation;
    if (cycle % 2 == 0) {
      run_requests(*rt.engine, {q});
      auto unloaded = rt.engine->unload_adapter(a.id, a.generation);
      ASSERT_TRUE(std::holds_alternative<int>(unloaded));
      EXPECT_EQ(std::get<int>(unloaded), 0);
    } else {
      run_and_unload_under_it(*rt.engine, q, a);
    }
    run_requests(*rt.engine, {r});  // the engine thread has run the free before this base request's step
    after_unload.push_back(dev.bytes_in_use());
    EXPECT_EQ(rt.loaded.model->adapters().n_in_use(), 0) << "cycle " << cycle;
  }
  // The first cycle's adapter step allocated the LoRA scratch, kept for later steps; from then on nothing grows.
  for (int cycle = 1; cycle < 20; ++cycle) {
    EXPECT_EQ(after_load[static_cast<size_t>(cycle)], after_load[1]) << "cycle " << cycle;
    EXPECT_EQ(after_unload[static_cast<size_t>(cycle)], after_unload[0]) << "cycle " << cycle;
  }
  EXPECT_GT(after_load[1], after_unload[0]);  // the adapter was on the device, and went
}

// With a byte budget (what `kairo serve` reserves for adapters), a runtime load that does not fit what is left is
// refused with what to change, and fits once an unload gave its bytes back.
TEST(LoraEngine, ARuntimeLoadBeyondTheAdapterMemoryIsRefused) {
  const auto& files = lora_fixture().files;
  testing::LoadedModel loaded = testing::load_shared_model(kBase);
  auto adapter = model::lora::load_adapter(files[0], loaded.model->file(), loaded.model->config());
  ASSERT_TRUE(adapter.ok()) << adapter.error().message;
  auto prepared = model::lora::prepare_adapter(*adapter, loaded.model->config());
  ASSERT_TRUE(prepared.ok()) << prepared.error().message;
  const uint64_t bytes = prepared->matrices->device_bytes;  // every file of the fixture: rank 8, F16
  EngineConfig cfg;
  cfg.n_threads = 2;
  cfg.max_loras = 2;
  cfg.max_lora_rank = 8;
  cfg.max_lora_bytes = bytes + bytes / 2;
  auto engine = Engine::create(*loaded.model, *loaded.tokenizer, cfg);
  ASSERT_TRUE(engine.ok()) << engine.error().message;
  auto first = (*engine)->load_adapter(files[0], 1.0f);
  ASSERT_TRUE(std::holds_alternative<LoadedAdapter>(first));
  auto refused = (*engine)->load_adapter(files[1], 1.0f);
  ASSERT_TRUE(std::holds_alternative<AdapterRefusal>(refused));
  EXPECT_EQ(std::get<AdapterRefusal>(refused).kind, AdapterError::Full);
  EXPECT_EQ(std::get<AdapterRefusal>(refused).message,
            "this LoRA adapter takes " + human_bytes(bytes) + " of device memory but only " +
                human_bytes(bytes / 2) + " of the " + human_bytes(bytes + bytes / 2) +
                " reserved for LoRA adapters is free (" + human_bytes(bytes) +
                " held by the adapters loaded or loading); kairo serve reserves room for --max-loras 2 adapters of "
                "rank up to --max-lora-rank 8 in F16 (docs/lora.md): unload an adapter first, or restart with a "
                "larger --max-lora-rank or --max-loras");
  const LoadedAdapter a = std::get<LoadedAdapter>(first);
  ASSERT_TRUE(std::holds_alternative<int>((*engine)->unload_adapter(a.id, a.generation)));
  auto second = (*engine)->load_adapter(files[1], 1.0f);  // queued after the free: the bytes are back
  EXPECT_TRUE(std::holds_alternative<LoadedAdapter>(second));
}

}  // namespace
}  // namespace kairo::engine
