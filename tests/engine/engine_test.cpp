// The continuous-batching engine end to end on a real (random-weight) model: batching, preemption and chunking
// must not change a temperature-0 output; prefix caching must hit resent history; aborts free everything.
#include <gtest/gtest.h>

#include <future>
#include <mutex>
#include <random>

#include "engine/engine.h"
#include "engine/generator.h"
#include "engine_test_support.h"
#include "model/model.h"
#include "test_paths.h"
#include "tokenizer/tokenizer.h"

namespace kairo::engine {
namespace {

using testing::mixed_requests;

struct EngineFixture {
  std::unique_ptr<model::Model> model;
  std::unique_ptr<tokenizer::Tokenizer> tokenizer;
};

EngineFixture& synth_model() {
  static EngineFixture f = [] {
    EngineFixture out;
    auto m = model::Model::load(kairo::testing::shared_path("models/synth-llama-gqa.Q8_0.gguf"));
    EXPECT_TRUE(m.ok()) << m.error().message;
    out.model = std::move(m).value();
    auto t = tokenizer::Tokenizer::from_gguf(out.model->file());
    EXPECT_TRUE(t.ok()) << t.error().message;
    out.tokenizer = std::move(t).value();
    return out;
  }();
  return f;
}

struct Collected {
  std::vector<int32_t> tokens;
  std::string text;
  FinishReason reason = FinishReason::None;
  int n_cached = 0;
  bool finished = false;
};

// Submits every request, waits for all to finish, returns what each produced.
class Client {
 public:
  explicit Client(Engine& engine) : engine_(engine) {}

  RequestId submit(const Request& r, size_t slot) {
    auto result = engine_.submit(r, [this, slot](const RequestOutput& out) {
      std::lock_guard<std::mutex> lock(mutex_);
      Collected& c = results_[slot];
      for (const auto& t : out.tokens) c.tokens.push_back(t.token);
      c.text += out.text_delta;
      c.n_cached = out.n_cached_prompt_tokens;
      if (out.finished) {
        c.finished = true;
        c.reason = out.finish_reason;
        ++n_done_;
        done_.notify_all();
      }
    });
    EXPECT_TRUE(std::holds_alternative<RequestId>(result));
    return std::get<RequestId>(result);
  }

  std::vector<Collected> run(const std::vector<Request>& reqs) {
    results_.assign(reqs.size(), {});
    n_done_ = 0;
    for (size_t i = 0; i < reqs.size(); ++i) submit(reqs[i], i);
    wait(reqs.size());
    return results_;
  }

  void wait(size_t n) {
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [&] { return n_done_ >= n; });
  }

  std::vector<Collected> results_;

 private:
  Engine& engine_;
  std::mutex mutex_;
  std::condition_variable done_;
  size_t n_done_ = 0;
};

std::unique_ptr<Engine> make_engine(EngineConfig cfg) {
  EngineFixture& f = synth_model();
  auto e = Engine::create(*f.model, *f.tokenizer, cfg);
  EXPECT_TRUE(e.ok()) << e.error().message;
  return std::move(e).value();
}

std::vector<Collected> run_one_by_one(const std::vector<Request>& reqs) {
  EngineConfig cfg;
  cfg.enable_prefix_caching = false;
  auto engine = make_engine(cfg);
  Client client(*engine);
  std::vector<Collected> out;
  for (const Request& r : reqs) out.push_back(client.run({r})[0]);
  return out;
}

const std::vector<Request>& requests32() {
  static const std::vector<Request> reqs = mixed_requests(32, 6);
  return reqs;
}

const std::vector<Collected>& alone_outputs() {
  static const std::vector<Collected> out = run_one_by_one(requests32());
  return out;
}

void expect_same_tokens(const std::vector<Collected>& got, const std::vector<Collected>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_TRUE(got[i].finished);
    EXPECT_EQ(got[i].tokens, want[i].tokens) << "request " << i;
    EXPECT_EQ(got[i].text, want[i].text) << "request " << i;
  }
}

TEST(Engine, AloneMatchesTheSingleSequenceGenerator) {
  EngineFixture& f = synth_model();
  ThreadPool pool(2);
  for (size_t i : {0u, 7u, 11u}) {
    GenerateOptions opts;
    opts.max_tokens = 6;
    opts.sampling.temperature = 0;
    auto r = generate(*f.model, requests32()[i].prompt_tokens, opts, pool);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->tokens, alone_outputs()[i].tokens) << "request " << i;
  }
}

TEST(Engine, BatchedOutputsEqualRunningEachAlone) {
  EngineConfig cfg;
  cfg.scheduler.max_num_batched_tokens = 512;
  auto engine = make_engine(cfg);
  Client client(*engine);
  expect_same_tokens(client.run(requests32()), alone_outputs());
  EXPECT_EQ(engine->stats().n_preemptions, 0);
}

TEST(Engine, PreemptionUnderATinyKvPoolKeepsOutputsIdentical) {
  EngineConfig cfg;
  cfg.n_kv_blocks = 40;  // 640 token slots: far less than the 32 requests need together
  auto engine = make_engine(cfg);
  Client client(*engine);
  expect_same_tokens(client.run(requests32()), alone_outputs());
  const EngineStats s = engine->stats();
  EXPECT_GT(s.n_preemptions, 0);
  EXPECT_EQ(s.kv_usage, 0.0);
}

TEST(Engine, ThreeTenantsSharingStepsUnderATinyKvPoolKeepOutputsIdentical) {
  // Fair sharing (engine/fair_share.h) re-chunks prompts, reorders admission and picks other victims to preempt:
  // none of it may change a temperature-0 output.
  EngineConfig cfg;
  cfg.n_kv_blocks = 40;
  cfg.scheduler.max_num_batched_tokens = 64;
  auto engine = make_engine(cfg);
  Client client(*engine);
  std::vector<Request> reqs = requests32();
  const char* tenants[] = {"a", "b", "c"};
  const double weights[] = {1.0, 4.0, 0.25};
  for (size_t i = 0; i < reqs.size(); ++i) {
    reqs[i].tenant = tenants[i % 3];
    reqs[i].tenant_weight = weights[i % 3];
  }
  expect_same_tokens(client.run(reqs), alone_outputs());
  const EngineStats s = engine->stats();
  EXPECT_GT(s.n_preemptions, 0);
  EXPECT_EQ(s.kv_usage, 0.0);
}

TEST(Engine, SevenTokenPrefillChunksKeepOutputsIdentical) {
  EngineConfig cfg;
  cfg.scheduler.max_num_batched_tokens = 7;
  cfg.scheduler.long_prefill_threshold = 7;
  auto engine = make_engine(cfg);
  Client client(*engine);
  expect_same_tokens(client.run(requests32()), alone_outputs());
}

TEST(Engine, ResentConversationHitsEveryFullBlockOfItsHistory) {
  EngineConfig cfg;
  auto engine = make_engine(cfg);
  Client client(*engine);
  Request turn1 = mixed_requests(12, 10)[9];  // 233 prompt tokens
  turn1.stop.max_tokens = 10;
  const Collected out1 = client.run({turn1})[0];
  ASSERT_EQ(out1.tokens.size(), 10u);
  Request turn2 = turn1;
  turn2.prompt_tokens.insert(turn2.prompt_tokens.end(), out1.tokens.begin(), out1.tokens.end());
  const size_t history = turn2.prompt_tokens.size();  // 110: the last generated token has no KV yet
  for (int k = 0; k < 20; ++k) turn2.prompt_tokens.push_back(7 + k);
  const EngineStats before = engine->stats();
  const Collected out2 = client.run({turn2})[0];
  const int full_blocks_of_computed_history = static_cast<int>((history - 1) / 16) * 16;
  EXPECT_EQ(out2.n_cached, full_blocks_of_computed_history);
  const EngineStats after = engine->stats();
  EXPECT_EQ(after.prefix_cache_hits - before.prefix_cache_hits, full_blocks_of_computed_history);
  EXPECT_EQ(after.prompt_tokens - before.prompt_tokens,
            static_cast<int64_t>(turn2.prompt_tokens.size()) - full_blocks_of_computed_history);
}

// Sampled requests may run with relaxed numerics (kernels::Numerics), so their KV lives apart in the prefix cache:
// a temperature-0 request never reuses it (its output must not depend on what ran before), while requests of the
// same kind hit each other's blocks; with EngineConfig::exact_numerics every request is exact and all share.
TEST(Engine, RelaxedAndExactRequestsKeepTheirPrefixCacheEntriesApart) {
  Request greedy = mixed_requests(12, 4)[7];  // 100 prompt tokens
  const int cacheable = 96;                    // full blocks, never the last token
  Request sampled = greedy;
  sampled.sampling.temperature = 0.8f;
  sampled.sampling.seed = 3;
  {
    auto engine = make_engine(EngineConfig{});
    Client client(*engine);
    EXPECT_EQ(client.run({sampled})[0].n_cached, 0);
    EXPECT_EQ(client.run({greedy})[0].n_cached, 0);
    EXPECT_EQ(client.run({greedy})[0].n_cached, cacheable);
    EXPECT_EQ(client.run({sampled})[0].n_cached, cacheable);
  }
  EngineConfig all_exact;
  all_exact.exact_numerics = true;
  auto engine = make_engine(all_exact);
  Client client(*engine);
  EXPECT_EQ(client.run({sampled})[0].n_cached, 0);
  EXPECT_EQ(client.run({greedy})[0].n_cached, cacheable);
}

// A step with any temperature-0 request runs exact: greedy outputs next to sampled long prompts (whose steps alone
// would be relaxed) equal running alone.
TEST(Engine, GreedyOutputsNextToSampledRequestsEqualRunningAlone) {
  std::vector<Request> reqs = requests32();
  for (size_t i = 0; i < reqs.size(); i += 2) {
    reqs[i].sampling.temperature = 1.0f;
    reqs[i].sampling.seed = i;
  }
  auto engine = make_engine(EngineConfig{});
  Client client(*engine);
  const std::vector<Collected> got = client.run(reqs);
  for (size_t i = 1; i < reqs.size(); i += 2) {
    EXPECT_EQ(got[i].tokens, alone_outputs()[i].tokens) << "request " << i;
    EXPECT_EQ(got[i].text, alone_outputs()[i].text) << "request " << i;
  }
}

// n > 1 through Request::fork_of: choices 1..3 park on choice 0 and fork its KV when its prompt is computed. A
// small token budget spreads the prompt over dozens of steps, so the children arrive long before it is done.
struct ForkRun {
  std::vector<Collected> out;
  int64_t prompt_tokens = 0;
  double kv_usage_after = 1.0;
};

ForkRun run_forked(const Request& r, int n, bool abort_parent, int max_num_seqs = 64) {
  EngineConfig cfg;
  cfg.scheduler.max_num_batched_tokens = 8;
  cfg.scheduler.max_num_seqs = max_num_seqs;
  auto engine = make_engine(cfg);
  Client client(*engine);
  client.results_.assign(static_cast<size_t>(n), {});
  const RequestId parent = client.submit(r, 0);
  for (int i = 1; i < n; ++i) {
    Request child = r;
    child.fork_of = parent;
    if (child.sampling.seed) child.sampling.seed = *child.sampling.seed + static_cast<uint64_t>(i);
    client.submit(child, static_cast<size_t>(i));
  }
  if (abort_parent) engine->abort(parent);
  client.wait(static_cast<size_t>(n));
  ForkRun run;
  run.out = client.results_;
  run.prompt_tokens = engine->stats().prompt_tokens;
  for (int i = 0; i < 100 && engine->stats().kv_usage != 0.0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  run.kv_usage_after = engine->stats().kv_usage;
  return run;
}

TEST(Engine, ForkedChoicesComputeThePromptOnceAndMatchRunningAlone) {
  const Request& r = requests32()[10];  // 300 prompt tokens, 6 greedy output tokens
  const ForkRun run = run_forked(r, 4, /*abort_parent=*/false);
  EXPECT_EQ(run.prompt_tokens, static_cast<int64_t>(r.prompt_tokens.size()));  // not 4x
  for (size_t i = 0; i < run.out.size(); ++i) {
    EXPECT_EQ(run.out[i].reason, FinishReason::Length);
    EXPECT_EQ(run.out[i].tokens, alone_outputs()[10].tokens) << "choice " << i;
    EXPECT_EQ(run.out[i].text, alone_outputs()[10].text) << "choice " << i;
  }
  for (size_t i = 1; i < run.out.size(); ++i) EXPECT_EQ(run.out[i].n_cached, static_cast<int>(r.prompt_tokens.size()));
  EXPECT_EQ(run.kv_usage_after, 0.0);  // the shared and the copied-on-write blocks were all freed
}

TEST(Engine, ForkedChoicesBeyondMaxNumSeqsWaitAndReuseThePrompt) {
  const Request& r = requests32()[10];  // 300 prompt tokens: 18 full blocks (288 tokens) cached for the late ones
  const ForkRun run = run_forked(r, 4, /*abort_parent=*/false, /*max_num_seqs=*/2);
  // Choice 0 and one fork run together; the other two wait, then compute only the prompt's partial last block.
  EXPECT_EQ(run.prompt_tokens, 300 + 2 * (300 - 288));
  for (size_t i = 0; i < run.out.size(); ++i) {
    EXPECT_EQ(run.out[i].reason, FinishReason::Length);
    EXPECT_EQ(run.out[i].tokens, alone_outputs()[10].tokens) << "choice " << i;
  }
  EXPECT_EQ(run.kv_usage_after, 0.0);
}

TEST(Engine, ForkedChoicesSampleIndependently) {
  Request r = requests32()[10];  // 300 prompt tokens: the last block is partial, so each child copies it on write
  r.sampling.temperature = 1.0f;
  r.sampling.seed = 42;
  r.stop.max_tokens = 12;
  const ForkRun run = run_forked(r, 4, /*abort_parent=*/false);
  EXPECT_EQ(run.prompt_tokens, static_cast<int64_t>(r.prompt_tokens.size()));
  int n_distinct = 0;
  for (size_t i = 0; i < run.out.size(); ++i) {
    EXPECT_EQ(run.out[i].tokens.size(), 12u);
    bool seen = false;
    for (size_t j = 0; j < i; ++j) seen = seen || run.out[j].tokens == run.out[i].tokens;
    n_distinct += seen ? 0 : 1;
  }
  EXPECT_GT(n_distinct, 1);  // different seeds: the choices diverge
  EXPECT_EQ(run.kv_usage_after, 0.0);
}

TEST(Engine, ForkedChoicesCarryOnWhenTheirParentIsAborted) {
  const Request& r = requests32()[10];
  const ForkRun run = run_forked(r, 3, /*abort_parent=*/true);
  EXPECT_EQ(run.out[0].reason, FinishReason::Abort);
  for (size_t i = 1; i < run.out.size(); ++i) {
    EXPECT_EQ(run.out[i].reason, FinishReason::Length);
    EXPECT_EQ(run.out[i].tokens, alone_outputs()[10].tokens) << "choice " << i;
  }
  EXPECT_EQ(run.kv_usage_after, 0.0);
}

TEST(Engine, AbortFreesBlocksAndReportsAbort) {
  EngineConfig cfg;
  auto engine = make_engine(cfg);
  Client client(*engine);
  client.results_.assign(1, {});
  Request r = requests32()[10];
  r.stop.max_tokens = 100;
  const RequestId id = client.submit(r, 0);
  engine->abort(id);
  client.wait(1);
  EXPECT_EQ(client.results_[0].reason, FinishReason::Abort);
  EXPECT_LT(client.results_[0].tokens.size(), 100u);
  for (int i = 0; i < 100 && engine->stats().kv_usage != 0.0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_EQ(engine->stats().kv_usage, 0.0);
}

TEST(Engine, RefusesTooLongInvalidAndOverflowingRequests) {
  EngineConfig cfg;
  cfg.max_waiting = 0;
  auto engine = make_engine(cfg);
  Request r;
  r.prompt_tokens = std::vector<int32_t>(500, 5);
  r.stop.max_tokens = 20;
  auto too_long = engine->submit(r, [](const RequestOutput&) {});
  ASSERT_TRUE(std::holds_alternative<SubmitRejection>(too_long));
  EXPECT_EQ(std::get<SubmitRejection>(too_long).kind, SubmitError::TooLong);
  EXPECT_EQ(std::get<SubmitRejection>(too_long).message,
            "this model's maximum context length is 512 tokens, but 500 prompt tokens + 20 max_tokens = 520; shorten "
            "the prompt or lower max_tokens");
  r.prompt_tokens = {1, 512};
  auto bad_id = engine->submit(r, [](const RequestOutput&) {});
  ASSERT_TRUE(std::holds_alternative<SubmitRejection>(bad_id));
  EXPECT_EQ(std::get<SubmitRejection>(bad_id).message, "prompt token id 512 is outside the vocabulary (0..511)");
  r.prompt_tokens = {1, 2};
  auto full = engine->submit(r, [](const RequestOutput&) {});
  ASSERT_TRUE(std::holds_alternative<SubmitRejection>(full));
  EXPECT_EQ(std::get<SubmitRejection>(full).kind, SubmitError::QueueFull);
}

TEST(Engine, MaxModelLenLimitsRequestsAndTheDefaultPool) {
  EngineConfig cfg;
  cfg.max_model_len = 128;
  cfg.scheduler.max_num_seqs = 4;
  auto engine = make_engine(cfg);
  EXPECT_EQ(engine->context_length(), 128);
  EXPECT_EQ(engine->n_kv_blocks(), 4 * 8);  // default pool: max_num_seqs sequences of 128 tokens
  EXPECT_EQ(engine->memory_summary().rfind("KV cache: 512 tokens (", 0), 0u) << engine->memory_summary();
  EXPECT_NE(engine->memory_summary().find("max concurrency 4.0 at context 128"), std::string::npos);
  Request r;
  r.prompt_tokens = std::vector<int32_t>(100, 5);
  r.stop.max_tokens = 29;
  auto too_long = engine->submit(r, [](const RequestOutput&) {});
  ASSERT_TRUE(std::holds_alternative<SubmitRejection>(too_long));
  EXPECT_EQ(std::get<SubmitRejection>(too_long).message,
            "this model's maximum context length is 128 tokens, but 100 prompt tokens + 29 max_tokens = 129; shorten "
            "the prompt or lower max_tokens");
}

TEST(Engine, RefusesAPoolSmallerThanOneSequenceAndALengthBeyondTheModel) {
  EngineFixture& f = synth_model();
  EngineConfig cfg;
  cfg.max_model_len = 100;
  cfg.n_kv_blocks = 6;  // 96 tokens
  auto small = Engine::create(*f.model, *f.tokenizer, cfg);
  ASSERT_FALSE(small.ok());
  EXPECT_EQ(small.error().message,
            "a KV pool of 6 blocks of 16 tokens is smaller than one sequence of 100 tokens (max_model_len) needs: 7 "
            "blocks");
  cfg.n_kv_blocks = 0;
  cfg.max_model_len = 513;
  auto too_long = Engine::create(*f.model, *f.tokenizer, cfg);
  ASSERT_FALSE(too_long.ok());
  EXPECT_EQ(too_long.error().message, "--max-model-len 513 is outside 1..512 (the model's context length)");
}

TEST(Engine, StopStringEndsGenerationAndIsNotReturned) {
  EngineConfig cfg;
  auto engine = make_engine(cfg);
  Client client(*engine);
  Request r = requests32()[5];
  r.stop.max_tokens = 6;
  const Collected free_run = client.run({r})[0];
  ASSERT_GE(free_run.text.size(), 4u);
  // Stop on a piece of the text it would produce: the output is cut right before it.
  const std::string stop = free_run.text.substr(free_run.text.size() / 2, 2);
  r.stop.stop_strings = {stop};
  const Collected stopped = client.run({r})[0];
  EXPECT_EQ(stopped.reason, FinishReason::Stop);
  EXPECT_EQ(stopped.text, free_run.text.substr(0, free_run.text.find(stop)));
}

}  // namespace
}  // namespace kairo::engine
