// Embedding requests (Request::embedding) in the continuous batch: one vector from the final hidden states, the same
// bits whether the prompt runs alone, in small chunks, beside generating requests or preempted and computed again.
// (tests/server/embeddings_test.cpp checks the vectors against llama.cpp's.)
#include <gtest/gtest.h>

#include <cmath>
#include <condition_variable>
#include <mutex>

#include "engine/engine.h"
#include "engine_test_support.h"

namespace kairo::engine {
namespace {

using testing::mixed_requests;

testing::LoadedModel& loaded() {
  static testing::LoadedModel m = testing::load_shared_model("synth-llama-gqa.Q8_0.gguf");
  return m;
}

struct Embedded {
  std::vector<float> embedding;
  std::vector<int32_t> tokens;
  FinishReason reason = FinishReason::None;
  int n_generated = 0;
};

// Submits every request to `engine` at once and waits for all of them.
std::vector<Embedded> run_embeddings(Engine& engine, const std::vector<Request>& reqs) {
  std::vector<Embedded> out(reqs.size());
  std::mutex mutex;
  std::condition_variable cv;
  size_t done = 0;
  for (size_t i = 0; i < reqs.size(); ++i) {
    auto id = engine.submit(reqs[i], [&, i](const RequestOutput& o) {
      std::lock_guard<std::mutex> lock(mutex);
      for (const auto& t : o.tokens) out[i].tokens.push_back(t.token);
      if (!o.finished) return;
      out[i].embedding = o.embedding;
      out[i].reason = o.finish_reason;
      out[i].n_generated = o.n_generated_tokens;
      ++done;
      cv.notify_all();
    });
    EXPECT_TRUE(std::holds_alternative<RequestId>(id));
  }
  std::unique_lock<std::mutex> lock(mutex);
  cv.wait(lock, [&] { return done == reqs.size(); });
  return out;
}

std::vector<Embedded> run_embeddings(const EngineConfig& cfg, const std::vector<Request>& reqs,
                                     EngineStats* stats = nullptr) {
  auto engine = Engine::create(*loaded().model, *loaded().tokenizer, cfg);
  EXPECT_TRUE(engine.ok()) << engine.error().message;
  if (!engine.ok()) return std::vector<Embedded>(reqs.size());
  std::vector<Embedded> out = run_embeddings(**engine, reqs);
  if (stats) *stats = (*engine)->stats();
  return out;
}

std::vector<Request> embedding_requests(EmbeddingPooling pooling, int n = 8) {
  std::vector<Request> reqs = mixed_requests(n, 0, 99);
  for (Request& r : reqs) {
    r.embedding = pooling;
    r.stop.max_tokens = 5;  // ignored: an embedding request generates nothing
  }
  return reqs;
}

const EmbeddingPooling kPoolings[] = {EmbeddingPooling::Mean, EmbeddingPooling::Cls, EmbeddingPooling::Last};

TEST(Embedding, OneUnitVectorOfTheModelsWidthAndNoTokens) {
  for (EmbeddingPooling p : kPoolings) {
    const auto out = run_embeddings(EngineConfig{}, embedding_requests(p));
    for (const Embedded& r : out) {
      EXPECT_EQ(r.reason, FinishReason::Stop);
      EXPECT_TRUE(r.tokens.empty());
      EXPECT_EQ(r.n_generated, 0);
      ASSERT_EQ(r.embedding.size(), static_cast<size_t>(loaded().model->config().dim));
      double norm2 = 0;
      for (float v : r.embedding) norm2 += static_cast<double>(v) * v;
      EXPECT_NEAR(norm2, 1.0, 1e-5);
    }
  }
}

TEST(Embedding, UnnormalisedMeanIsTheMeanAndDiffersFromLast) {
  auto reqs = embedding_requests(EmbeddingPooling::Mean, 4);
  for (Request& r : reqs) r.normalize_embedding = false;
  const auto mean = run_embeddings(EngineConfig{}, reqs);
  const auto last = run_embeddings(EngineConfig{}, embedding_requests(EmbeddingPooling::Last, 4));
  const auto cls = run_embeddings(EngineConfig{}, embedding_requests(EmbeddingPooling::Cls, 4));
  // The first request's prompt is one token: every pooling is that token's state (up to normalisation).
  double norm2 = 0;
  for (float v : mean[0].embedding) norm2 += static_cast<double>(v) * v;
  for (size_t k = 0; k < mean[0].embedding.size(); ++k) {
    EXPECT_NEAR(mean[0].embedding[k] / std::sqrt(norm2), last[0].embedding[k], 1e-6);
    EXPECT_EQ(last[0].embedding[k], cls[0].embedding[k]);
  }
  EXPECT_NE(last[3].embedding, cls[3].embedding) << "16 tokens: the first and the last differ";
}

// Chunking, the other requests of the step and preemption change nothing: the states are batch-invariant (exact
// numerics) and the mean adds them in position order, each position once.
TEST(Embedding, SameBitsAloneChunkedBatchedAndPreempted) {
  for (EmbeddingPooling p : kPoolings) {
    const std::vector<Request> reqs = embedding_requests(p, 12);
    std::vector<Embedded> alone;  // one engine, one request at a time
    {
      auto engine = Engine::create(*loaded().model, *loaded().tokenizer, EngineConfig{});
      ASSERT_TRUE(engine.ok()) << engine.error().message;
      for (const Request& r : reqs) alone.push_back(run_embeddings(**engine, {r})[0]);
    }

    EngineConfig chunked;
    chunked.scheduler.max_num_batched_tokens = 7;
    const auto small_steps = run_embeddings(chunked, reqs);

    // Embeddings beside generating requests, in a pool too small for all: some are preempted and computed again.
    std::vector<Request> mixed = mixed_requests(12, 8, 5);
    mixed.insert(mixed.end(), reqs.begin(), reqs.end());
    EngineConfig tight;
    tight.n_kv_blocks = 40;
    tight.scheduler.max_num_batched_tokens = 64;
    EngineStats stats;
    const auto together = run_embeddings(tight, mixed, &stats);
    EXPECT_GT(stats.n_preemptions, 0);
    EXPECT_EQ(stats.n_kv_blocks_used, 0) << "every block comes back";

    for (size_t i = 0; i < reqs.size(); ++i) {
      EXPECT_EQ(small_steps[i].embedding, alone[i].embedding) << "request " << i;
      EXPECT_EQ(together[12 + i].embedding, alone[i].embedding) << "request " << i;
    }
  }
}

}  // namespace
}  // namespace kairo::engine
