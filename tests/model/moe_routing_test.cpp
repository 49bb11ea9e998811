// Mixture-of-experts routing against a hand computation: softmax over every expert, the top n_used kept and
// renormalised, tokens grouped by expert in ascending expert id.
#include "model/moe_routing.h"

#include <gtest/gtest.h>

#include <cmath>

namespace kairo::model {
namespace {

TEST(MoeRouting, TopKOfTheSoftmaxRenormalisedAndGroupedByExpert) {
  // Token 0 prefers experts 2 then 0; token 1 prefers 3 then 2; token 2 prefers 0 then 1.
  const float logits[] = {1.0f, -1.0f, 2.0f, 0.0f,   //
                          0.0f, 0.5f, 1.0f, 3.0f,    //
                          4.0f, 3.5f, -2.0f, 0.0f};
  Routing r;
  route_tokens(logits, 3, 4, 2, r);
  ASSERT_EQ(r.n_active(), 4);
  EXPECT_EQ(r.experts[0].expert, 0);
  EXPECT_EQ(r.experts[0].rows, (std::vector<int32_t>{0, 2}));
  EXPECT_EQ(r.experts[1].expert, 1);
  EXPECT_EQ(r.experts[1].rows, (std::vector<int32_t>{2}));
  EXPECT_EQ(r.experts[2].expert, 2);
  EXPECT_EQ(r.experts[2].rows, (std::vector<int32_t>{0, 1}));
  EXPECT_EQ(r.experts[3].expert, 3);
  EXPECT_EQ(r.experts[3].rows, (std::vector<int32_t>{1}));
  // Renormalised over the two chosen: w = e^a / (e^a + e^b), whatever the other experts' logits.
  auto pair = [](float a, float b) { return std::exp(a) / (std::exp(a) + std::exp(b)); };
  EXPECT_NEAR(r.experts[2].weights[0], pair(2.0f, 1.0f), 1e-6);  // token 0, expert 2
  EXPECT_NEAR(r.experts[0].weights[0], pair(1.0f, 2.0f), 1e-6);  // token 0, expert 0
  EXPECT_NEAR(r.experts[3].weights[0], pair(3.0f, 1.0f), 1e-6);  // token 1, expert 3
  EXPECT_NEAR(r.experts[0].weights[1], pair(4.0f, 3.5f), 1e-6);  // token 2, expert 0
  EXPECT_NEAR(r.experts[1].weights[0], pair(3.5f, 4.0f), 1e-6);  // token 2, expert 1
}

TEST(MoeRouting, EveryTokensWeightsSumToOneAndUnchosenExpertsAreAbsent) {
  std::vector<float> logits;
  const int n_tokens = 7, n_experts = 16, n_used = 4;
  for (int t = 0; t < n_tokens; ++t)
    for (int e = 0; e < n_experts; ++e) logits.push_back(std::sin(0.7f * static_cast<float>(t * n_experts + e)) * 3);
  Routing r;
  route_tokens(logits.data(), n_tokens, n_experts, n_used, r);
  std::vector<double> sum(n_tokens, 0.0);
  std::vector<int> picks(n_tokens, 0);
  int last_expert = -1;
  for (const ExpertTokens& e : r.experts) {
    EXPECT_GT(e.expert, last_expert);
    last_expert = e.expert;
    ASSERT_FALSE(e.rows.empty());
    for (size_t i = 0; i < e.rows.size(); ++i) {
      sum[static_cast<size_t>(e.rows[i])] += e.weights[i];
      ++picks[static_cast<size_t>(e.rows[i])];
      if (i > 0) EXPECT_LT(e.rows[i - 1], e.rows[i]);
    }
  }
  for (int t = 0; t < n_tokens; ++t) {
    EXPECT_EQ(picks[static_cast<size_t>(t)], n_used);
    EXPECT_NEAR(sum[static_cast<size_t>(t)], 1.0, 1e-6);
  }
}

TEST(MoeRouting, TiesGoToTheLowerExpertAndOneExpertPerTokenWorks) {
  const float logits[] = {0.5f, 2.0f, 2.0f, 2.0f};
  Routing r;
  route_tokens(logits, 1, 4, 2, r);
  ASSERT_EQ(r.n_active(), 2);
  EXPECT_EQ(r.experts[0].expert, 1);
  EXPECT_EQ(r.experts[1].expert, 2);
  EXPECT_FLOAT_EQ(r.experts[0].weights[0], 0.5f);
  route_tokens(logits, 1, 4, 1, r);
  ASSERT_EQ(r.n_active(), 1);
  EXPECT_EQ(r.experts[0].expert, 1);
  EXPECT_FLOAT_EQ(r.experts[0].weights[0], 1.0f);
}

}  // namespace
}  // namespace kairo::model
