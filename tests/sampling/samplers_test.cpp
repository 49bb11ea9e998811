// Each sampler on small distributions with exact expectations (token id -> probability after the sampler).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "sampling_test_util.h"

namespace kairo::sampling {
namespace {

using testing::apply_and_normalise;
using testing::from_probs;
using Probs = std::map<int32_t, float>;

const std::vector<float> kProbs = {0.1f, 0.2f, 0.3f, 0.4f};

void expect_probs(const Probs& got, const Probs& want) {
  ASSERT_EQ(got.size(), want.size());
  for (const auto& [id, p] : want) {
    ASSERT_TRUE(got.count(id)) << "token " << id << " missing";
    EXPECT_NEAR(got.at(id), p, 1e-5) << "token " << id;
  }
}

TEST(Temperature, OneKeepsDistributionZeroKeepsArgmax) {
  expect_probs(apply_and_normalise(*make_temperature(1.0f), from_probs(kProbs)),
               {{0, 0.1f}, {1, 0.2f}, {2, 0.3f}, {3, 0.4f}});
  expect_probs(apply_and_normalise(*make_temperature(0.0f), from_probs(kProbs)), {{3, 1.0f}});
}

TEST(Temperature, HalfSquaresProbabilities) {
  // p_i^(1/t) renormalised: t = 0.5 -> p^2 / sum p^2 (sum = 0.3).
  expect_probs(apply_and_normalise(*make_temperature(0.5f), from_probs(kProbs)),
               {{0, 0.01f / 0.3f}, {1, 0.04f / 0.3f}, {2, 0.09f / 0.3f}, {3, 0.16f / 0.3f}});
}

TEST(TopK, KeepsKMostLikely) {
  expect_probs(apply_and_normalise(*make_top_k(1), from_probs(kProbs)), {{3, 1.0f}});
  expect_probs(apply_and_normalise(*make_top_k(3), from_probs(kProbs)),
               {{3, 4.0f / 9}, {2, 3.0f / 9}, {1, 2.0f / 9}});
  expect_probs(apply_and_normalise(*make_top_k(4), from_probs(kProbs)),
               {{0, 0.1f}, {1, 0.2f}, {2, 0.3f}, {3, 0.4f}});
  expect_probs(apply_and_normalise(*make_top_k(0), from_probs(kProbs)),
               {{0, 0.1f}, {1, 0.2f}, {2, 0.3f}, {3, 0.4f}});
}

TEST(TopK, TiesBreakTowardLowerId) {
  Candidates c = from_probs({0.25f, 0.25f, 0.25f, 0.25f});
  make_top_k(2)->apply(c);
  ASSERT_EQ(c.data.size(), 2u);
  EXPECT_EQ(c.data[0].id, 0);
  EXPECT_EQ(c.data[1].id, 1);
  EXPECT_TRUE(c.sorted);
}

TEST(TopP, KeepsSmallestPrefixReachingP) {
  expect_probs(apply_and_normalise(*make_top_p(0.0f), from_probs(kProbs)), {{3, 1.0f}});
  expect_probs(apply_and_normalise(*make_top_p(0.35f), from_probs(kProbs)), {{3, 1.0f}});
  expect_probs(apply_and_normalise(*make_top_p(0.65f), from_probs(kProbs)), {{3, 4.0f / 7}, {2, 3.0f / 7}});
  expect_probs(apply_and_normalise(*make_top_p(0.75f), from_probs(kProbs)),
               {{3, 4.0f / 9}, {2, 3.0f / 9}, {1, 2.0f / 9}});
  expect_probs(apply_and_normalise(*make_top_p(0.95f), from_probs(kProbs)),
               {{0, 0.1f}, {1, 0.2f}, {2, 0.3f}, {3, 0.4f}});
  expect_probs(apply_and_normalise(*make_top_p(1.0f), from_probs(kProbs)),
               {{0, 0.1f}, {1, 0.2f}, {2, 0.3f}, {3, 0.4f}});
}

TEST(TopP, MinKeepWins) {
  expect_probs(apply_and_normalise(*make_top_p(0.1f, 3), from_probs(kProbs)),
               {{3, 4.0f / 9}, {2, 3.0f / 9}, {1, 2.0f / 9}});
}

TEST(TopP, LargeUnsortedVocabularyMatchesFullSort) {
  // logits = log(id) over 10000 tokens: p(id) = id / sum. The nucleus for p = 0.5 is ~2900 tokens, so the
  // chunked selection (256, then 1024, then 4096) needs three rounds.
  const int32_t n = 10000;
  std::vector<float> logits(n);
  for (int32_t i = 0; i < n; ++i) logits[i] = std::log(static_cast<float>(i));
  Candidates c;
  c.reset_from_logits(logits.data(), n);
  make_top_p(0.5f)->apply(c);
  const double total = 0.5 * n * (n - 1);
  double cum = 0;
  int32_t expected = 0;
  for (int32_t i = n - 1; cum < 0.5 * total; --i) {
    cum += i;
    ++expected;
  }
  ASSERT_EQ(static_cast<int32_t>(c.data.size()), expected);
  EXPECT_TRUE(c.sorted);
  for (int32_t i = 0; i < expected; ++i) ASSERT_EQ(c.data[i].id, n - 1 - i);
}

TEST(MinP, ThresholdRelativeToMostLikely) {
  const Probs all = {{0, 0.1f}, {1, 0.2f}, {2, 0.3f}, {3, 0.4f}};
  const Probs top3 = {{1, 0.2f / 0.9f}, {2, 0.3f / 0.9f}, {3, 0.4f / 0.9f}};
  const Probs top2 = {{2, 0.3f / 0.7f}, {3, 0.4f / 0.7f}};
  const Probs top1 = {{3, 1.0f}};
  expect_probs(apply_and_normalise(*make_min_p(0.00f), from_probs(kProbs)), all);
  expect_probs(apply_and_normalise(*make_min_p(0.24f), from_probs(kProbs)), all);
  expect_probs(apply_and_normalise(*make_min_p(0.26f), from_probs(kProbs)), top3);
  expect_probs(apply_and_normalise(*make_min_p(0.49f), from_probs(kProbs)), top3);
  expect_probs(apply_and_normalise(*make_min_p(0.51f), from_probs(kProbs)), top2);
  expect_probs(apply_and_normalise(*make_min_p(0.74f), from_probs(kProbs)), top2);
  expect_probs(apply_and_normalise(*make_min_p(0.76f), from_probs(kProbs)), top1);
  expect_probs(apply_and_normalise(*make_min_p(1.00f), from_probs(kProbs)), top1);
  expect_probs(apply_and_normalise(*make_min_p(1.05f), from_probs(kProbs)), top1);
}

TEST(MinP, PreservesOrderOfSortedSet) {
  Candidates c = from_probs(kProbs);
  c.sort();
  make_min_p(0.4f)->apply(c);
  ASSERT_EQ(c.data.size(), 3u);
  EXPECT_EQ(c.data[0].id, 3);
  EXPECT_EQ(c.data[1].id, 2);
  EXPECT_EQ(c.data[2].id, 1);
}

// Penalties: uniform 5-token distribution, tokens accepted before applying (llama.cpp test-sampling cases).
Probs penalised(const std::vector<int32_t>& history, float repetition, float frequency, float presence) {
  auto s = make_penalties(static_cast<int32_t>(history.size()), repetition, frequency, presence);
  for (int32_t t : history) s->accept(t);
  return apply_and_normalise(*s, from_probs({0.2f, 0.2f, 0.2f, 0.2f, 0.2f}));
}

TEST(Penalties, RepetitionMatchesLlamaCpp) {
  expect_probs(penalised({0}, 50.0f, 0.0f, 0.0f), {{0, 0.0f}, {1, 0.25f}, {2, 0.25f}, {3, 0.25f}, {4, 0.25f}});
  expect_probs(penalised({0, 1, 2}, 50.0f, 0.0f, 0.0f), {{0, 0.0f}, {1, 0.0f}, {2, 0.0f}, {3, 0.5f}, {4, 0.5f}});
  expect_probs(penalised({0, 1, 2, 0, 0}, 50.0f, 0.0f, 0.0f),
               {{0, 0.0f}, {1, 0.0f}, {2, 0.0f}, {3, 0.5f}, {4, 0.5f}});
}

TEST(Penalties, FrequencyAndPresenceMatchLlamaCpp) {
  expect_probs(penalised({0}, 1.0f, 5.0f, 5.0f),
               {{0, 0.000011f}, {1, 0.249997f}, {2, 0.249997f}, {3, 0.249997f}, {4, 0.249997f}});
  expect_probs(penalised({0, 1, 2}, 1.0f, 5.0f, 5.0f),
               {{0, 0.000023f}, {1, 0.000023f}, {2, 0.000023f}, {3, 0.499966f}, {4, 0.499966f}});
  expect_probs(penalised({0, 1, 2, 0, 0}, 1.0f, 5.0f, 5.0f),
               {{0, 0.0f}, {1, 0.000023f}, {2, 0.000023f}, {3, 0.499977f}, {4, 0.499977f}});
}

TEST(Penalties, ExactLogitMath) {
  // Positive logits are divided by the repetition penalty, negative ones multiplied; then
  // logit -= count * frequency + presence.
  const float logits[4] = {2.0f, -1.0f, 0.5f, 3.0f};
  Candidates c;
  c.reset_from_logits(logits, 4);
  auto s = make_penalties(-1, 2.0f, 0.5f, 0.25f);
  for (int32_t t : {0, 0, 0, 1}) s->accept(t);
  s->apply(c);
  EXPECT_FLOAT_EQ(c.data[0].logit, 2.0f / 2 - 3 * 0.5f - 0.25f);
  EXPECT_FLOAT_EQ(c.data[1].logit, -1.0f * 2 - 1 * 0.5f - 0.25f);
  EXPECT_FLOAT_EQ(c.data[2].logit, 0.5f);
  EXPECT_FLOAT_EQ(c.data[3].logit, 3.0f);
}

TEST(Penalties, WindowForgetsOldTokensAndResetClears) {
  const float logits[4] = {1.0f, 1.0f, 1.0f, 1.0f};
  auto s = make_penalties(2, 1.0f, 1.0f, 0.0f);
  for (int32_t t : {0, 1, 2}) s->accept(t);  // window = {1, 2}
  Candidates c;
  c.reset_from_logits(logits, 4);
  s->apply(c);
  EXPECT_FLOAT_EQ(c.data[0].logit, 1.0f);
  EXPECT_FLOAT_EQ(c.data[1].logit, 0.0f);
  EXPECT_FLOAT_EQ(c.data[2].logit, 0.0f);
  EXPECT_FLOAT_EQ(c.data[3].logit, 1.0f);

  s->reset();
  c.reset_from_logits(logits, 4);
  s->apply(c);
  for (const auto& t : c.data) EXPECT_FLOAT_EQ(t.logit, 1.0f);
}

TEST(Penalties, FindsTokensAfterReordering) {
  Candidates c = from_probs(kProbs);
  c.sort();  // ids no longer match indices
  auto s = make_penalties(4, 1.0f, 0.0f, 10.0f);
  s->accept(3);
  s->apply(c);
  for (const auto& t : c.data) {
    EXPECT_FLOAT_EQ(t.logit, std::log(kProbs[t.id]) - (t.id == 3 ? 10.0f : 0.0f));
  }
}

TEST(LogitBias, AddsAndBans) {
  expect_probs(apply_and_normalise(*make_logit_bias({{3, -kInf}, {0, std::log(2.0f)}}), from_probs(kProbs)),
               {{0, 0.2f / 0.7f}, {1, 0.2f / 0.7f}, {2, 0.3f / 0.7f}, {3, 0.0f}});
}

TEST(LogitBias, BanBeatsInfiniteLogit) {
  const float logits[3] = {kInf, 0.0f, 1.0f};
  Candidates c;
  c.reset_from_logits(logits, 3);
  make_logit_bias({{0, -kInf}})->apply(c);
  EXPECT_EQ(c.data[0].logit, -kInf);
  make_greedy()->apply(c);
  EXPECT_EQ(c.data[static_cast<size_t>(c.selected)].id, 2);
}

TEST(Greedy, TiesGoToLowestId) {
  const float logits[4] = {1.0f, 3.0f, 3.0f, 2.0f};
  Candidates c;
  c.reset_from_logits(logits, 4);
  make_greedy()->apply(c);
  EXPECT_EQ(c.selected, 1);
}

TEST(Candidates, SoftmaxDegenerateCases) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float with_inf[4] = {kInf, 0.0f, kInf, nan};
  Candidates c;
  c.reset_from_logits(with_inf, 4);
  EXPECT_EQ(c.data[3].logit, -kInf);  // NaN sanitised
  c.softmax();
  EXPECT_FLOAT_EQ(c.data[0].p, 0.5f);
  EXPECT_FLOAT_EQ(c.data[1].p, 0.0f);
  EXPECT_FLOAT_EQ(c.data[2].p, 0.5f);
  EXPECT_FLOAT_EQ(c.data[3].p, 0.0f);

  const float all_banned[4] = {-kInf, nan, -kInf, nan};
  c.reset_from_logits(all_banned, 4);
  c.softmax();
  for (const auto& t : c.data) EXPECT_FLOAT_EQ(t.p, 0.25f);
}

}  // namespace
}  // namespace kairo::sampling
