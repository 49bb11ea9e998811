// The chain built from a config: composition, seeded reproducibility, greedy determinism, bad logits.
#include "sampling/sampler_chain.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>

#include "sampling_test_util.h"

namespace kairo::sampling {
namespace {

const float kNan = std::numeric_limits<float>::quiet_NaN();

std::vector<std::string> names(const SamplerChain& chain) {
  std::vector<std::string> out;
  for (size_t i = 0; i < chain.size(); ++i) out.emplace_back(chain.at(i).name());
  return out;
}

std::vector<float> log_probs(const std::vector<float>& probs) {
  std::vector<float> out;
  for (float p : probs) out.push_back(std::log(p));
  return out;
}

std::vector<int32_t> draw(SamplerChain& chain, const std::vector<float>& logits, int n) {
  std::vector<int32_t> out;
  for (int i = 0; i < n; ++i) out.push_back(chain.sample(logits.data(), static_cast<int32_t>(logits.size())));
  return out;
}

// A config that turns every sampler on.
SamplingConfig every_sampler() {
  SamplingConfig c;
  c.logit_bias = {{1, 2.0f}};
  c.repetition_penalty = 1.1f;
  c.top_k = 40;
  c.top_p = 0.9f;
  c.min_p = 0.05f;
  c.temperature = 0.7f;
  c.seed = 1;
  return c;
}

TEST(SamplerChain, FullConfigOrder) {
  EXPECT_EQ(names(SamplerChain::from_config(every_sampler())),
            (std::vector<std::string>{"logit-bias", "penalties", "top-k", "top-p", "min-p", "temperature", "dist"}));
}

TEST(SamplerChain, DefaultsAreJustDistAndZeroTemperatureIsGreedy) {
  SamplingConfig c;
  c.seed = 7;
  EXPECT_EQ(names(SamplerChain::from_config(c)), (std::vector<std::string>{"dist"}));
  c.temperature = 0.0f;
  c.top_k = 5;
  c.top_p = 0.5f;
  c.presence_penalty = 1.0f;
  EXPECT_EQ(names(SamplerChain::from_config(c)), (std::vector<std::string>{"penalties", "greedy"}));
}

TEST(SamplerChain, DistMatchesIndependentComputationFromMt19937_64) {
  // The draw is specified exactly: u = (mt19937_64 output >> 11) * 2^-53, then the first token whose cumulative
  // probability (in token-id order) exceeds u. Recompute that here independently.
  const std::vector<float> probs = {0.1f, 0.2f, 0.3f, 0.4f};
  const auto logits = log_probs(probs);
  SamplingConfig c;
  c.seed = 12345;
  auto chain = SamplerChain::from_config(c);
  std::mt19937_64 rng(12345);
  for (int i = 0; i < 200; ++i) {
    const double u = static_cast<double>(rng() >> 11) * 0x1.0p-53;
    double cum = 0.0;
    int32_t want = 3;
    for (int32_t t = 0; t < 4; ++t) {
      cum += probs[t];
      if (u < cum + 1e-6) {
        want = u < cum - 1e-6 ? t : -1;  // -1: too close to a boundary for float probabilities, skip
        break;
      }
    }
    const int32_t got = chain.sample(logits.data(), 4);
    if (want >= 0) {
      EXPECT_EQ(got, want) << "draw " << i;
    }
  }
}

TEST(SamplerChain, SeedReproducibleAndResetRestarts) {
  const auto logits = log_probs({0.1f, 0.2f, 0.3f, 0.4f});
  SamplingConfig c;
  c.seed = 42;
  c.top_k = 3;
  c.temperature = 1.5f;
  auto a = SamplerChain::from_config(c);
  auto b = SamplerChain::from_config(c);
  const auto first = draw(a, logits, 100);
  EXPECT_EQ(first, draw(b, logits, 100));
  a.reset();
  EXPECT_EQ(first, draw(a, logits, 100));
  c.seed = 43;
  auto other = SamplerChain::from_config(c);
  EXPECT_NE(first, draw(other, logits, 100));
  // top_k = 3 removed token 0.
  for (int32_t t : first) EXPECT_NE(t, 0);
}

TEST(SamplerChain, RandomSeedIsDrawnAndReported) {
  SamplingConfig c;  // seed = kRandomSeed
  auto a = SamplerChain::from_config(c);
  EXPECT_NE(a.seed(), kRandomSeed);
  c.seed = a.seed();
  auto b = SamplerChain::from_config(c);
  const auto logits = log_probs({0.25f, 0.25f, 0.25f, 0.25f});
  EXPECT_EQ(draw(a, logits, 50), draw(b, logits, 50));
}

TEST(SamplerChain, EmpiricalFrequenciesFollowDistribution) {
  const std::vector<float> probs = {0.1f, 0.2f, 0.3f, 0.4f};
  const auto logits = log_probs(probs);
  SamplingConfig c;
  c.seed = 3;
  auto chain = SamplerChain::from_config(c);
  int counts[4] = {0, 0, 0, 0};
  const int n = 20000;
  for (int32_t t : draw(chain, logits, n)) ++counts[t];
  for (int t = 0; t < 4; ++t) EXPECT_NEAR(counts[t] / static_cast<double>(n), probs[t], 0.015) << t;
}

TEST(SamplerChain, GreedyIgnoresSeedAndAppliesPenalties) {
  const std::vector<float> logits = {0.0f, 2.0f, 1.5f, 0.0f};
  SamplingConfig c;
  c.temperature = 0.0f;
  c.seed = 1;
  auto a = SamplerChain::from_config(c);
  c.seed = 2;
  auto b = SamplerChain::from_config(c);
  EXPECT_EQ(draw(a, logits, 5), (std::vector<int32_t>(5, 1)));
  EXPECT_EQ(draw(b, logits, 5), (std::vector<int32_t>(5, 1)));

  c.repetition_penalty = 2.0f;  // 2.0 / 2 = 1.0 < 1.5 once token 1 has been seen
  auto pen = SamplerChain::from_config(c);
  EXPECT_EQ(pen.sample(logits.data(), 4), 1);
  pen.accept(1);
  EXPECT_EQ(pen.sample(logits.data(), 4), 2);
  pen.reset();
  EXPECT_EQ(pen.sample(logits.data(), 4), 1);
}

TEST(SamplerChain, NanLogitsAreNeverChosen) {
  const std::vector<float> logits = {kNan, 1.0f, 2.0f, kNan};
  SamplingConfig c;
  c.seed = 9;
  auto chain = SamplerChain::from_config(c);
  bool saw[4] = {false, false, false, false};
  for (int32_t t : draw(chain, logits, 500)) saw[t] = true;
  EXPECT_FALSE(saw[0]);
  EXPECT_TRUE(saw[1]);
  EXPECT_TRUE(saw[2]);
  EXPECT_FALSE(saw[3]);
  c.temperature = 0.0f;
  auto greedy = SamplerChain::from_config(c);
  EXPECT_EQ(greedy.sample(logits.data(), 4), 2);
}

TEST(SamplerChain, InfiniteLogitsTakeAllMass) {
  const std::vector<float> logits = {kInf, 0.0f, kInf, 5.0f};
  SamplingConfig c;
  c.seed = 5;
  c.top_p = 0.9f;
  c.min_p = 0.1f;
  c.temperature = 0.5f;
  auto chain = SamplerChain::from_config(c);
  bool saw[4] = {false, false, false, false};
  for (int32_t t : draw(chain, logits, 200)) saw[t] = true;
  EXPECT_TRUE(saw[0] || saw[2]);
  EXPECT_FALSE(saw[1]);
  EXPECT_FALSE(saw[3]);
  c.temperature = 0.0f;
  EXPECT_EQ(SamplerChain::from_config(c).sample(logits.data(), 4), 0);
}

TEST(SamplerChain, AllLogitsBadStillReturnsAValidToken) {
  const std::vector<float> logits = {kNan, -kInf, kNan, -kInf};
  SamplingConfig c;
  c.seed = 11;
  c.top_k = 2;
  c.top_p = 0.5f;
  auto chain = SamplerChain::from_config(c);
  for (int32_t t : draw(chain, logits, 50)) {
    EXPECT_GE(t, 0);
    EXPECT_LT(t, 4);
  }
  c.temperature = 0.0f;
  EXPECT_EQ(SamplerChain::from_config(c).sample(logits.data(), 4), 0);
}

TEST(ValidateConfig, RejectsWithFieldAndRange) {
  auto msg = [](SamplingConfig c) {
    Status s = validate_config(c, 4);
    return s.ok() ? std::string("ok") : s.error().message;
  };
  EXPECT_EQ(msg({}), "ok");
  SamplingConfig c;
  c.temperature = -1.0f;
  EXPECT_EQ(msg(c), "temperature must be a finite number >= 0 (0 = greedy), got -1");
  c = {};
  c.top_p = 1.5f;
  EXPECT_EQ(msg(c), "top_p must be in [0, 1] (1 = off), got 1.5");
  c = {};
  c.top_k = -3;
  EXPECT_EQ(msg(c), "top_k must be >= 0 (0 = off), got -3");
  c = {};
  c.min_p = kNan;
  EXPECT_EQ(msg(c), "min_p must be in [0, 1] (0 = off), got nan");
  c = {};
  c.repetition_penalty = 0.0f;
  EXPECT_EQ(msg(c), "repetition_penalty must be a finite number > 0 (1 = off), got 0");
  c = {};
  c.frequency_penalty = kInf;
  EXPECT_EQ(msg(c), "frequency_penalty must be a finite number (0 = off)");
  c = {};
  c.penalty_last_n = -2;
  EXPECT_EQ(msg(c), "penalty_last_n must be >= -1 (-1 = all tokens, 0 = off), got -2");
  c = {};
  c.logit_bias = {{4, 1.0f}};
  EXPECT_EQ(msg(c), "logit_bias names token 4, but token ids run from 0 to 3");
  c.logit_bias = {{2, kNan}};
  EXPECT_EQ(msg(c), "logit_bias for token 2 is not a number");
}

TEST(SamplerChain, LargeVocabularyQueue) {
  // llama.cpp's sampler-queue check: logits = log(id) over 10000 tokens, top-k 100 then top-p 0.5 keeps the
  // highest ids whose mass (proportional to id) first reaches half of the top-100 mass.
  const int32_t n = 10000;
  std::vector<float> logits(n);
  for (int32_t i = 0; i < n; ++i) logits[i] = std::log(static_cast<float>(i));
  Candidates cands;
  cands.reset_from_logits(logits.data(), n);
  SamplerChain chain;
  chain.add(make_top_k(100));
  chain.add(make_top_p(0.5f));
  chain.apply(cands);
  // top-100 ids 9900..9999, total mass S = sum ids; keep ids from 9999 down until cumsum >= S/2.
  double total = 0;
  for (int32_t i = 9900; i < n; ++i) total += i;
  double cum = 0;
  int32_t expected = 0;
  for (int32_t i = n - 1; cum < 0.5 * total; --i) {
    cum += i;
    ++expected;
  }
  ASSERT_EQ(static_cast<int32_t>(cands.data.size()), expected);
  EXPECT_EQ(cands.data.front().id, n - 1);
  EXPECT_EQ(cands.data.back().id, n - expected);
}

TEST(SamplerChain, DraftFiltersKeepBiasFiltersAndTemperatureButNotPenaltiesOrASelector) {
  const SamplerChain f = SamplerChain::draft_filters(every_sampler());
  EXPECT_EQ(names(f), (std::vector<std::string>{"logit-bias", "top-k", "top-p", "min-p", "temperature"}));
}

}  // namespace
}  // namespace kairo::sampling
