#pragma once
// What the engine tests share: a model and its tokenizer from ../shared, and running a set of requests to the end.
#include <gtest/gtest.h>

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include "engine/engine_client.h"
#include "model/model.h"
#include "test_paths.h"
#include "tokenizer/tokenizer.h"

namespace kairo::engine::testing {

struct LoadedModel {
  std::unique_ptr<model::Model> model;
  std::unique_ptr<tokenizer::Tokenizer> tokenizer;
};

// `models/<file>` of ../shared, with the tokenizer its GGUF carries.
inline LoadedModel load_shared_model(const std::string& file) {
  LoadedModel out;
  auto m = model::Model::load(kairo::testing::shared_path("models/" + file));
  EXPECT_TRUE(m.ok()) << m.error().message;
  if (!m.ok()) return out;
  out.model = std::move(m).value();
  auto t = tokenizer::Tokenizer::from_gguf(out.model->file());
  EXPECT_TRUE(t.ok()) << t.error().message;
  if (t.ok()) out.tokenizer = std::move(t).value();
  return out;
}

// The demo model (aidreams260K), loaded once per process.
inline LoadedModel& demo_model() {
  static LoadedModel m = load_shared_model("aidreams260K.gguf");
  return m;
}

// n greedy requests (end-of-sequence ignored) with prompts of 1 to ~400 tokens: BOS, then random ids in 3..502. With
// repeat_phrase, every odd request's prompt repeats its first 8 tokens, so n-gram proposers find matches.
inline std::vector<Request> mixed_requests(int n, int max_tokens, uint32_t seed = 1234, bool repeat_phrase = false) {
  std::mt19937 rng(seed);
  std::vector<Request> reqs;
  const int lengths[] = {1, 2, 5, 16, 17, 31, 64, 100, 150, 233, 300, 400};
  for (int i = 0; i < n; ++i) {
    Request r;
    const int len = lengths[i % 12] + (i / 12);
    r.prompt_tokens.push_back(1);  // BOS
    for (int k = 1; k < len; ++k) {
      const bool repeat = repeat_phrase && i % 2 == 1 && k >= 8;
      r.prompt_tokens.push_back(repeat ? r.prompt_tokens[static_cast<size_t>(k % 8)] : 3 + static_cast<int>(rng() % 500));
    }
    r.sampling.temperature = 0;
    r.stop.max_tokens = max_tokens;
    r.stop.ignore_eos = true;
    reqs.push_back(r);
  }
  return reqs;
}

struct Finished {
  std::vector<int32_t> tokens;
  std::string text;
  FinishReason reason = FinishReason::None;
  std::string error;
  int n_cached = 0;  // prompt tokens served by the prefix cache
};

// Submits every request at once and waits until all have finished. on_output (optional) sees each update first,
// on the engine's thread.
inline std::vector<Finished> run_requests(EngineClient& engine, const std::vector<Request>& reqs,
                                          const std::function<void(size_t, const RequestOutput&)>& on_output = {}) {
  std::vector<Finished> out(reqs.size());
  std::mutex mutex;
  std::condition_variable done;
  size_t n_done = 0;
  for (size_t i = 0; i < reqs.size(); ++i) {
    auto id = engine.submit(reqs[i], [&, i](const RequestOutput& o) {
      if (on_output) on_output(i, o);
      std::lock_guard<std::mutex> lock(mutex);
      for (const auto& t : o.tokens) out[i].tokens.push_back(t.token);
      out[i].text += o.text_delta;
      out[i].n_cached = o.n_cached_prompt_tokens;
      if (o.finished) {
        out[i].reason = o.finish_reason;
        out[i].error = o.error;
        ++n_done;
        done.notify_all();
      }
    });
    EXPECT_TRUE(std::holds_alternative<RequestId>(id));
  }
  std::unique_lock<std::mutex> lock(mutex);
  done.wait(lock, [&] { return n_done == reqs.size(); });
  return out;
}

}  // namespace kairo::engine::testing
