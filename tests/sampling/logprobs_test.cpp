#include "sampling/logprobs.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "sampling_test_util.h"

namespace kairo::sampling {
namespace {

TEST(Logprobs, LogSoftmaxRecoversLogProbabilities) {
  // Logits shifted by a constant: log-softmax must undo the shift.
  const float logits[4] = {std::log(0.1f) + 7, std::log(0.2f) + 7, std::log(0.3f) + 7, std::log(0.4f) + 7};
  std::vector<float> out;
  log_softmax(logits, 4, out);
  ASSERT_EQ(out.size(), 4u);
  EXPECT_NEAR(out[0], std::log(0.1f), 1e-6);
  EXPECT_NEAR(out[1], std::log(0.2f), 1e-6);
  EXPECT_NEAR(out[2], std::log(0.3f), 1e-6);
  EXPECT_NEAR(out[3], std::log(0.4f), 1e-6);
  EXPECT_NEAR(token_logprob(logits, 4, 2), std::log(0.3f), 1e-6);
  EXPECT_EQ(token_logprob(logits, 4, 4), -kInf);
}

TEST(Logprobs, TopKSortedWithTiesByIdAndClamped) {
  const float logits[5] = {1.0f, 3.0f, 2.0f, 3.0f, 0.0f};
  const auto top = top_logprobs(logits, 5, 3);
  ASSERT_EQ(top.size(), 3u);
  EXPECT_EQ(top[0].token, 1);
  EXPECT_EQ(top[1].token, 3);
  EXPECT_EQ(top[2].token, 2);
  const double lse = std::log(std::exp(1.0) + 2 * std::exp(3.0) + std::exp(2.0) + 1.0);
  EXPECT_NEAR(top[0].logprob, 3.0 - lse, 1e-6);
  EXPECT_NEAR(top[2].logprob, 2.0 - lse, 1e-6);
  EXPECT_EQ(top_logprobs(logits, 5, 10).size(), 5u);
  EXPECT_TRUE(top_logprobs(logits, 5, 0).empty());
  EXPECT_TRUE(top_logprobs(logits, 5, -1).empty());
}

TEST(Logprobs, BadLogitsStayFinitelyDefined) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float logits[4] = {nan, kInf, 0.0f, kInf};
  std::vector<float> out;
  log_softmax(logits, 4, out);
  EXPECT_EQ(out[0], -kInf);
  EXPECT_FLOAT_EQ(out[1], std::log(0.5f));
  EXPECT_EQ(out[2], -kInf);
  EXPECT_FLOAT_EQ(out[3], std::log(0.5f));
  const auto top = top_logprobs(logits, 4, 4);
  EXPECT_EQ(top[0].token, 1);
  EXPECT_EQ(top[1].token, 3);
  EXPECT_EQ(top[2].token, 2);
  EXPECT_EQ(top[3].token, 0);
}

}  // namespace
}  // namespace kairo::sampling
