// Mixture-of-experts routing against a hand computation: softmax over every expert, the top n_used kept and
// renormalised, tokens grouped by expert in ascending expert id.
#include "model/moe_routing.h"

#include <gtest/gtest.h>

#include <cmath>

namespace kairo::model {
namespace {

std::vector<int32_t> rows(const Routing& r, int k) {
  const auto span = r.rows_of(k);
  return {span.begin(), span.end()};
}

TEST(MoeRouting, TopKOfTheSoftmaxRenormalisedAndGroupedByExpert) {
  // Token 0 prefers experts 2 then 0; token 1 prefers 3 then 2; token 2 prefers 0 then 1.
  const float logits[] = {1.0f, -1.0f, 2.0f, 0.0f,   //
                          0.0f, 0.5f, 1.0f, 3.0f,    //
                          4.0f, 3.5f, -2.0f, 0.0f};
  Routing r;
  route_tokens(logits, 3, 4, 2, r);
  ASSERT_EQ(r.n_active(), 4);
  EXPECT_EQ(r.experts[0], 0);
  EXPECT_EQ(rows(r, 0), (std::vector<int32_t>{0, 2}));
  EXPECT_EQ(r.experts[1], 1);
  EXPECT_EQ(rows(r, 1), (std::vector<int32_t>{2}));
  EXPECT_EQ(r.experts[2], 2);
  EXPECT_EQ(rows(r, 2), (std::vector<int32_t>{0, 1}));
  EXPECT_EQ(r.experts[3], 3);
  EXPECT_EQ(rows(r, 3), (std::vector<int32_t>{1}));
  // Renormalised over the two chosen: w = e^a / (e^a + e^b), whatever the other experts' logits.
  auto pair = [](float a, float b) { return std::exp(a) / (std::exp(a) + std::exp(b)); };
  EXPECT_NEAR(r.weights_of(2)[0], pair(2.0f, 1.0f), 1e-6);  // token 0, expert 2
  EXPECT_NEAR(r.weights_of(0)[0], pair(1.0f, 2.0f), 1e-6);  // token 0, expert 0
  EXPECT_NEAR(r.weights_of(3)[0], pair(3.0f, 1.0f), 1e-6);  // token 1, expert 3
  EXPECT_NEAR(r.weights_of(0)[1], pair(4.0f, 3.5f), 1e-6);  // token 2, expert 0
  EXPECT_NEAR(r.weights_of(1)[0], pair(3.5f, 4.0f), 1e-6);  // token 2, expert 1
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
  ASSERT_EQ(r.offsets.size(), r.experts.size() + 1);
  EXPECT_EQ(r.n_entries(), n_tokens * n_used);
  for (int k = 0; k < r.n_active(); ++k) {
    EXPECT_GT(r.experts[static_cast<size_t>(k)], last_expert);
    last_expert = r.experts[static_cast<size_t>(k)];
    const auto rows = r.rows_of(k);
    const auto weights = r.weights_of(k);
    ASSERT_FALSE(rows.empty());
    for (size_t i = 0; i < rows.size(); ++i) {
      sum[static_cast<size_t>(rows[i])] += weights[i];
      ++picks[static_cast<size_t>(rows[i])];
      if (i > 0) EXPECT_LT(rows[i - 1], rows[i]);
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
  EXPECT_EQ(r.experts[0], 1);
  EXPECT_EQ(r.experts[1], 2);
  EXPECT_FLOAT_EQ(r.weights_of(0)[0], 0.5f);
  route_tokens(logits, 1, 4, 1, r);
  ASSERT_EQ(r.n_active(), 1);
  EXPECT_EQ(r.experts[0], 1);
  EXPECT_FLOAT_EQ(r.weights_of(0)[0], 1.0f);
}

}  // namespace
}  // namespace kairo::model
