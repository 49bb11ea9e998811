// The weighted max-min fair split and the virtual clock of engine/fair_share.h, against their definitions.
#include "engine/fair_share.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>

namespace kairo::engine {
namespace {

TEST(SplitFairly, EqualWeightsSplitEvenlyAndSmallDemandsAreMetInFull) {
  EXPECT_EQ(split_fairly({100, 100}, {1, 1}, 16), (std::vector<int>{8, 8}));
  // 6 is under the level of 8: met in full, the other gets the rest.
  EXPECT_EQ(split_fairly({100, 6}, {1, 1}, 16), (std::vector<int>{10, 6}));
  EXPECT_EQ(split_fairly({3, 6}, {1, 1}, 16), (std::vector<int>{3, 6}));  // less demand than budget: all of it
  EXPECT_EQ(split_fairly({0, 50, 50}, {1, 1, 1}, 10), (std::vector<int>{0, 5, 5}));
  EXPECT_EQ(split_fairly({50, 50}, {1, 1}, 0), (std::vector<int>{0, 0}));
}

TEST(SplitFairly, WeightsSetTheRatio) {
  EXPECT_EQ(split_fairly({100, 100}, {1, 3}, 16), (std::vector<int>{4, 12}));
  EXPECT_EQ(split_fairly({1000, 1000}, {4, 1}, 512), (std::vector<int>{410, 102}));
  // The heavy tenant needs less than its share: the light one takes what is left.
  EXPECT_EQ(split_fairly({100, 20}, {1, 4}, 64), (std::vector<int>{44, 20}));
}

TEST(SplitFairly, RandomCasesMeetTheDefinition) {
  std::mt19937 rng(7);
  for (int iter = 0; iter < 2000; ++iter) {
    const int n = 1 + static_cast<int>(rng() % 6);
    std::vector<int> d(n);
    std::vector<double> w(n);
    for (int i = 0; i < n; ++i) {
      d[i] = static_cast<int>(rng() % 300);
      w[i] = 0.25 * (1 + rng() % 16);
    }
    const int budget = static_cast<int>(rng() % 600);
    const std::vector<int> out = split_fairly(d, w, budget);
    ASSERT_EQ(out.size(), d.size());
    const int sum = std::accumulate(out.begin(), out.end(), 0);
    EXPECT_EQ(sum, std::min(budget, std::accumulate(d.begin(), d.end(), 0)));  // work-conserving, never over
    for (int i = 0; i < n; ++i) {
      EXPECT_GE(out[i], 0);
      EXPECT_LE(out[i], d[i]);
      if (out[i] >= d[i]) continue;
      // i is short of its demand: nobody has a larger weighted share than i, up to one token of rounding.
      for (int j = 0; j < n; ++j) {
        EXPECT_LE(out[j] / w[j], out[i] / w[i] + 1.0 / w[j] + 1.0 / w[i] + 1e-9)
            << "iter " << iter << " i " << i << " j " << j;
      }
    }
  }
}

FairShare::Tenant at_work(double weight, int demand) {
  FairShare::Tenant t;
  t.weight = weight;
  t.demand = demand;
  t.waiting = true;
  return t;
}

TEST(FairShare, OneTenantIsNotAFairStep) {
  FairShare f;
  f.begin_step({{"a", at_work(1, 50)}}, 16, 8, 16);
  EXPECT_FALSE(f.active());
}

TEST(FairShare, AllowancesSeatsAndVirtualTimes) {
  FairShare f;
  f.begin_step({{"a", at_work(1, 100)}, {"b", at_work(3, 100)}}, 16, 8, 16);
  ASSERT_TRUE(f.active());
  EXPECT_EQ(f.tenant("a").allowance, 4);
  EXPECT_EQ(f.tenant("b").allowance, 12);
  EXPECT_EQ(f.tenant("a").seat_share, 2);
  EXPECT_EQ(f.tenant("b").seat_share, 6);
  EXPECT_EQ(f.n_waiting_tenants(), 2);
  f.tenant("b").used = 6;
  EXPECT_DOUBLE_EQ(f.finish_time("b"), 2.0);  // 6 tokens / weight 3
  f.charge("a", 1, 4);
  f.charge("b", 3, 12);
  f.begin_step({{"a", at_work(1, 100)}, {"b", at_work(3, 100)}}, 16, 8, 16);
  EXPECT_DOUBLE_EQ(f.finish_time("a"), 4.0);
  EXPECT_DOUBLE_EQ(f.finish_time("b"), 4.0);
}

TEST(FairShare, AShareIsCappedAtTheWeightedLevelOfTheLargestOtherShare) {
  FairShare f;
  // b only decodes (1 token): a's prompt advances min_chunk tokens per step, not the remaining 511.
  f.begin_step({{"a", at_work(1, 5000)}, {"b", at_work(1, 1)}}, 512, 64, 16);
  EXPECT_EQ(f.tenant("a").allowance, 16);
  EXPECT_EQ(f.tenant("b").allowance, 1);
  // b's 55-token prompt: a gets as many, not the rest of the budget.
  f.begin_step({{"a", at_work(1, 5000)}, {"b", at_work(1, 55)}}, 512, 64, 16);
  EXPECT_EQ(f.tenant("a").allowance, 55);
  EXPECT_EQ(f.tenant("b").allowance, 55);
  // Weight 4 against b's 55 at weight 1: up to 220.
  f.begin_step({{"a", at_work(4, 5000)}, {"b", at_work(1, 55)}}, 512, 64, 16);
  EXPECT_EQ(f.tenant("a").allowance, 220);
  // Both above the level: the plain weighted split, untouched by the cap.
  f.begin_step({{"a", at_work(1, 5000)}, {"b", at_work(3, 5000)}}, 512, 64, 16);
  EXPECT_EQ(f.tenant("a").allowance, 128);
  EXPECT_EQ(f.tenant("b").allowance, 384);
}

TEST(FairShare, NoTenantTrailsTheLeadByMoreThanOneStepOfItsOwnTokens) {
  FairShare f;
  f.begin_step({{"a", at_work(1, 100)}, {"b", at_work(1, 100)}}, 16, 8, 16);
  EXPECT_DOUBLE_EQ(f.finish_time("a"), 0.0);  // all new: level at zero
  EXPECT_DOUBLE_EQ(f.finish_time("b"), 0.0);
  f.charge("a", 1, 100);
  f.charge("b", 1, 40);
  // The credit is one step's budget (16 tokens at weight 1). c starts that far behind the lead (a's 100), and b,
  // which trailed by 60, is lifted to the same.
  f.begin_step({{"a", at_work(1, 100)}, {"b", at_work(1, 100)}, {"c", at_work(1, 100)}}, 16, 8, 16);
  EXPECT_DOUBLE_EQ(f.finish_time("c"), 84.0);
  EXPECT_DOUBLE_EQ(f.finish_time("b"), 84.0);
  // b idles one step while a and c go on; back, it starts one credit behind the lead again (a's 600), not at its own
  // old time: idling banks no more than that.
  f.charge("a", 1, 500);
  f.charge("c", 1, 500);
  f.begin_step({{"a", at_work(1, 100)}, {"c", at_work(1, 100)}}, 16, 8, 16);
  f.begin_step({{"a", at_work(1, 100)}, {"b", at_work(1, 100)}, {"c", at_work(1, 100)}}, 16, 8, 16);
  EXPECT_DOUBLE_EQ(f.finish_time("b"), 584.0);
  // The credit is in the tenant's own tokens: at weight 4, 16 tokens are 4 of virtual time.
  f.begin_step({{"a", at_work(1, 100)}, {"c", at_work(1, 100)}}, 16, 8, 16);
  f.begin_step({{"a", at_work(1, 100)}, {"c", at_work(1, 100)}, {"d", at_work(4, 100)}}, 16, 8, 16);
  EXPECT_DOUBLE_EQ(f.finish_time("d"), 596.0);
  // A period with one tenant ends the fair period: the next one starts over, with the tenant that was at work as the
  // incumbent and the one that joins it one credit behind.
  f.begin_step({{"a", at_work(1, 100)}}, 16, 8, 16);
  f.begin_step({{"a", at_work(1, 100)}, {"b", at_work(1, 100)}}, 16, 8, 16);
  EXPECT_DOUBLE_EQ(f.finish_time("a"), 0.0);
  EXPECT_DOUBLE_EQ(f.finish_time("b"), -16.0);
}

FairShare::Tenant prompting(double weight, int demand) {
  FairShare::Tenant t = at_work(weight, demand);
  t.prompt = true;
  return t;
}

TEST(FairShare, ATenantAheadYieldsTheStepToALaggingPrompt) {
  FairShare f;
  f.begin_step({{"a", prompting(1, 128)}}, 128, 64, 16);  // a's burst alone
  // b's 57-token prompt arrives one credit (128) behind: all of it finishes, in virtual time, before a's next token
  // starts. a keeps min_chunk, so the step is 73 tokens, not 114 (each with 57) or 128.
  for (int prompt = 0; prompt < 2; ++prompt) {
    f.begin_step({{"a", prompting(1, 128)}, {"b", prompting(1, 57)}}, 128, 64, 16);
    EXPECT_EQ(f.tenant("a").allowance, 16);
    EXPECT_EQ(f.tenant("b").allowance, 57);
    f.charge("a", 1, 16);
    f.charge("b", 1, 57);
  }
  // After two prompts b has caught up (-14 + 57 > 32): the even split again, capped at the other's level.
  f.begin_step({{"a", prompting(1, 128)}, {"b", prompting(1, 57)}}, 128, 64, 16);
  EXPECT_EQ(f.tenant("a").allowance, 57);
  EXPECT_EQ(f.tenant("b").allowance, 57);
}

TEST(FairShare, WhatAYieldingTenantLeavesGoesToThePromptItYieldsTo) {
  FairShare f;
  f.begin_step({{"a", prompting(1, 128)}}, 128, 64, 16);
  // Two prompts of b's (114 tokens) against a's 128: the split gives b 64; a yields, b takes all it needs, and a the
  // 14 left (under min_chunk): both prompts fit the step, as they would alone.
  f.begin_step({{"a", prompting(1, 128)}, {"b", prompting(1, 114)}}, 128, 64, 16);
  EXPECT_EQ(f.tenant("b").allowance, 114);
  EXPECT_EQ(f.tenant("a").allowance, 14);
  // A tenant that only decodes never makes the others yield: a's prompt keeps the step-length cap (min_chunk here).
  FairShare g;
  g.begin_step({{"a", prompting(1, 128)}}, 128, 64, 16);
  g.begin_step({{"a", prompting(1, 128)}, {"b", at_work(1, 2)}}, 128, 64, 16);
  EXPECT_EQ(g.tenant("a").allowance, 16);
  EXPECT_EQ(g.tenant("b").allowance, 2);
}

}  // namespace
}  // namespace kairo::engine
