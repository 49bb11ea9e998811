#pragma once
// What the engine tests share: a model and its tokenizer from ../shared, and running a set of requests to the end.
#include <gtest/gtest.h>

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
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
