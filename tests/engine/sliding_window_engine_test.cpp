// Sliding-window layers on their own block pool (gemma3: five windowed layers of window 8 for every global one):
// a sequence many windows long holds only its window's blocks in those layers, and the outputs equal a run that
// keeps every layer's whole context -- alone, batched, in small prefill chunks and from the prefix cache.
#include <gtest/gtest.h>

#include <algorithm>
#include <mutex>
#include <random>

#include "engine/engine.h"
#include "engine_test_support.h"

namespace kairo::engine {
namespace {

testing::LoadedModel& gemma3() {
  static testing::LoadedModel m = testing::load_shared_model("synth-gemma3.Q8_0.gguf");
  return m;
}

using Output = testing::Finished;

// Runs the requests together and records, after every step's outputs, the most windowed and full blocks in use.
struct WindowedRun {
  std::vector<Output> outputs;
  int64_t most_window_blocks = 0;
  int64_t most_full_blocks = 0;
};

WindowedRun run_windowed(Engine& engine, const std::vector<Request>& reqs) {
  WindowedRun r;
  std::mutex mutex;
  r.outputs = testing::run_requests(engine, reqs, [&](size_t, const RequestOutput&) {
    const EngineStats st = engine.stats();
    std::lock_guard<std::mutex> lock(mutex);
    r.most_window_blocks = std::max(r.most_window_blocks, st.n_window_kv_blocks_used);
    r.most_full_blocks = std::max(r.most_full_blocks, st.n_kv_blocks_used);
  });
  return r;
}

Request request(int n_prompt, int max_tokens, unsigned seed) {
  std::mt19937 rng(seed);
  Request r;
  r.prompt_tokens.push_back(1);
  for (int k = 1; k < n_prompt; ++k) r.prompt_tokens.push_back(3 + static_cast<int>(rng() % 250));
  r.sampling.temperature = 0;
  r.stop.max_tokens = max_tokens;
  r.stop.ignore_eos = true;
  return r;
}

std::unique_ptr<Engine> make_window_engine(bool keep_windowed_kv, int chunk = 512, bool caching = true) {
  EngineConfig cfg;
  cfg.block_size = 4;
  cfg.max_model_len = 256;
  cfg.keep_windowed_kv = keep_windowed_kv;
  cfg.enable_prefix_caching = caching;
  cfg.scheduler.max_num_seqs = 4;
  cfg.scheduler.max_num_batched_tokens = chunk;
  cfg.scheduler.long_prefill_threshold = chunk;
  auto e = Engine::create(*gemma3().model, *gemma3().tokenizer, cfg);
  EXPECT_TRUE(e.ok()) << e.error().message;
  return std::move(e).value();
}

const int kWindow = 8;

TEST(SlidingWindowEngine, Gemma3HasAWindowedGroupUnlessAskedToKeepEverything) {
  ASSERT_EQ(gemma3().model->config().sliding_window, kWindow);
  ASSERT_EQ(gemma3().model->config().n_windowed_layers(), 5);
  auto engine = make_window_engine(false);
  // 4 sequences x (2 window blocks + 3) + a step's 512 tokens in blocks of 4.
  EXPECT_EQ(engine->n_window_kv_blocks(), 4 * (2 + 3) + 128);
  EXPECT_NE(engine->memory_summary().find("the 5 sliding-window layers hold 148 blocks (window 8"),
            std::string::npos)
      << engine->memory_summary();
  EXPECT_EQ(make_window_engine(true)->n_window_kv_blocks(), 0);
}

TEST(SlidingWindowEngine, ASequenceOfSixteenWindowsHoldsOnlyItsWindowAndKeepsItsOutputs) {
  // 96 prompt tokens in 8-token chunks, then 32 generated: 128 positions = 16 windows.
  const Request r = request(96, 32, 7);
  auto kept = make_window_engine(true, 8);
  const WindowedRun want = run_windowed(*kept, {r});
  auto windowed = make_window_engine(false, 8);
  const WindowedRun got = run_windowed(*windowed, {r});
  ASSERT_EQ(got.outputs[0].tokens.size(), 32u);
  EXPECT_EQ(got.outputs[0].tokens, want.outputs[0].tokens);
  // The windowed layers: positions [p - 7, p] over blocks of 4 is at most 3 blocks, plus one being opened. The
  // global layer's blocks grow with the context (32 at the end).
  EXPECT_LE(got.most_window_blocks, 4);
  EXPECT_GE(got.most_window_blocks, 2);
  EXPECT_GE(got.most_full_blocks, 31);
  EXPECT_EQ(want.most_window_blocks, 0);
  const EngineStats st = windowed->stats();
  EXPECT_EQ(st.n_window_kv_blocks_used, 0);  // all released when the request finished
}

TEST(SlidingWindowEngine, BatchedAndChunkedOutputsEqualKeepingEverything) {
  std::vector<Request> reqs;
  for (int i = 0; i < 4; ++i) reqs.push_back(request(20 + 23 * i, 24, 100 + i));
  auto kept = make_window_engine(true);
  std::vector<Output> want;
  for (const Request& r : reqs) want.push_back(run_windowed(*kept, {r}).outputs[0]);
  for (int chunk : {512, 7}) {
    auto windowed = make_window_engine(false, chunk);
    const WindowedRun got = run_windowed(*windowed, reqs);
    for (size_t i = 0; i < reqs.size(); ++i) EXPECT_EQ(got.outputs[i].tokens, want[i].tokens) << "chunk " << chunk;
    // Four sequences, each holding at most its window (+ a step's chunk when prefilling).
    EXPECT_LE(got.most_window_blocks, chunk == 7 ? 4 * 5 : 4 * 4 + 128);
  }
}

TEST(SlidingWindowEngine, ResentHistoryHitsThePrefixCacheInBothGroups) {
  const Request turn1 = request(60, 12, 3);
  auto engine = make_window_engine(false);
  const Output out1 = run_windowed(*engine, {turn1}).outputs[0];
  Request turn2 = turn1;
  turn2.prompt_tokens.insert(turn2.prompt_tokens.end(), out1.tokens.begin(), out1.tokens.end());
  for (int k = 0; k < 9; ++k) turn2.prompt_tokens.push_back(11 + k);
  const Output got = run_windowed(*engine, {turn2}).outputs[0];
  // The history computed in turn 1 is 71 tokens (the last generated token has no KV): 17 full blocks of 4.
  EXPECT_EQ(got.n_cached, 68);
  auto fresh = make_window_engine(true, 512, /*caching=*/false);
  EXPECT_EQ(got.tokens, run_windowed(*fresh, {turn2}).outputs[0].tokens);
}

}  // namespace
}  // namespace kairo::engine
