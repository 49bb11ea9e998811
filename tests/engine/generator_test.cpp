// The single-sequence generator's numerics: a sampled prompt is prefilled with relaxed matmuls (what the engine gives
// sampled requests), a greedy one or GenerateOptions::exact_numerics with the batch-invariant ones.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "engine/generator.h"
#include "model/model.h"
#include "test_paths.h"

namespace kairo::engine {
namespace {

std::vector<float> first_logits(model::Model& m, const std::vector<int32_t>& prompt, float temperature, bool exact) {
  GenerateOptions o;
  o.max_tokens = 1;
  o.n_logit_steps = 1;
  o.sampling.temperature = temperature;
  o.sampling.seed = 1;
  o.exact_numerics = exact;
  ThreadPool pool(2);
  auto r = generate(m, prompt, o, pool);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
  return r.ok() && !r->step_logits.empty() ? r->step_logits[0] : std::vector<float>{};
}

TEST(Generator, SampledPromptsPrefillRelaxedUnlessExactIsAsked) {
  auto m = model::Model::load(kairo::testing::shared_path("models/synth-llama-gqa.Q8_0.gguf"));
  ASSERT_TRUE(m.ok()) << m.error().message;
  std::vector<int32_t> prompt{1};
  for (int i = 0; i < 47; ++i) prompt.push_back(3 + (i * 37) % 400);  // 48 tokens: the many-token path
  const std::vector<float> greedy = first_logits(**m, prompt, 0.0f, false);
  const std::vector<float> exact = first_logits(**m, prompt, 0.8f, true);
  const std::vector<float> relaxed = first_logits(**m, prompt, 0.8f, false);
  ASSERT_FALSE(greedy.empty());
  ASSERT_EQ(exact.size(), greedy.size());
  ASSERT_EQ(relaxed.size(), greedy.size());
  EXPECT_EQ(std::memcmp(exact.data(), greedy.data(), greedy.size() * sizeof(float)), 0);
  const bool relaxed_differs = std::memcmp(relaxed.data(), greedy.data(), greedy.size() * sizeof(float)) != 0;
  if (kernels::best_cpu_backend().matmul_relaxed != nullptr) EXPECT_TRUE(relaxed_differs);
  double dot = 0, na = 0, nb = 0;
  for (size_t i = 0; i < greedy.size(); ++i) {
    dot += double(relaxed[i]) * greedy[i];
    na += double(relaxed[i]) * relaxed[i];
    nb += double(greedy[i]) * greedy[i];
  }
  EXPECT_GE(dot / std::sqrt(na * nb), 0.999);
}

// A context limit bounds the KV kept (and so the memory): the prompt must fit under it, and generation stops when
// prompt + output reach it, with the tokens of an unlimited run up to there.
TEST(Generator, ContextLimitBoundsPromptAndOutput) {
  auto m = model::Model::load(kairo::testing::source_path("models/aidreams260K.gguf"));
  ASSERT_TRUE(m.ok()) << m.error().message;
  ThreadPool pool(2);
  std::vector<int32_t> prompt{1};
  for (int i = 0; i < 9; ++i) prompt.push_back(20 + i);
  GenerateOptions o;
  o.max_tokens = 100;
  o.sampling.temperature = 0.0f;
  o.stop_token_ids = {};  // run into the limit
  auto whole = generate(**m, prompt, o, pool);
  ASSERT_TRUE(whole.ok()) << whole.error().message;
  o.context_limit = 32;
  auto limited = generate(**m, prompt, o, pool);
  ASSERT_TRUE(limited.ok()) << limited.error().message;
  EXPECT_EQ(limited->stop_reason, StopReason::ContextFull);
  ASSERT_EQ(limited->tokens.size(), 32u - prompt.size());
  EXPECT_TRUE(std::equal(limited->tokens.begin(), limited->tokens.end(), whole->tokens.begin()));

  o.context_limit = 8;  // the prompt alone is longer
  auto refused = generate(**m, prompt, o, pool);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("--ctx-size"), std::string::npos) << refused.error().message;
  o.context_limit = -1;
  EXPECT_FALSE(generate(**m, prompt, o, pool).ok());
}

}  // namespace
}  // namespace kairo::engine
