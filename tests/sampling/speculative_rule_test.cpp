// The min(1, p/q) rule with resampling from norm(max(0, p - q)): whatever the draft's q, the token that comes out is
// distributed as p, and a guess is accepted with probability sum(min(p, q)). Checked by simulation against exact
// expectations, and on the sampler chain's distribution(), which gives p and q their form.
#include "sampling/speculative_rule.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>

#include "sampling/sampler_chain.h"

namespace kairo::sampling {
namespace {

SparseDistribution dist(std::vector<int32_t> ids, std::vector<float> p) { return {std::move(ids), std::move(p)}; }

struct Simulated {
  std::map<int32_t, double> frequency;
  double acceptance = 0;
};

// n rounds of: draw a guess from q, verify it against p.
Simulated simulate(const SparseDistribution& p, const SparseDistribution& q, int n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Simulated s;
  int n_accepted = 0;
  for (int i = 0; i < n; ++i) {
    const int32_t guess = q.draw(uniform01(rng));
    const double u_accept = uniform01(rng);
    const GuessVerdict v = verify_guess(p, q, guess, u_accept, uniform01(rng));
    n_accepted += v.accepted;
    s.frequency[v.token] += 1.0 / n;
  }
  s.acceptance = static_cast<double>(n_accepted) / n;
  return s;
}

TEST(SpeculativeRule, TheTokenThatComesOutIsDistributedAsPWhateverQIs) {
  const SparseDistribution p = dist({2, 5, 7, 9}, {0.5f, 0.3f, 0.15f, 0.05f});
  // q: flatter, sharper, a token p does not have, and missing one p has.
  const std::vector<SparseDistribution> qs = {
      dist({2, 5, 7, 9}, {0.25f, 0.25f, 0.25f, 0.25f}),
      dist({2, 5, 7, 9}, {0.05f, 0.05f, 0.85f, 0.05f}),
      dist({1, 2, 5}, {0.4f, 0.3f, 0.3f}),
  };
  constexpr int kN = 400000;
  for (size_t k = 0; k < qs.size(); ++k) {
    Simulated s = simulate(p, qs[k], kN, 7 + k);
    double expected_acceptance = 0;
    for (size_t i = 0; i < p.ids.size(); ++i) expected_acceptance += std::min(p.p[i], qs[k].probability(p.ids[i]));
    EXPECT_NEAR(s.acceptance, expected_acceptance, 0.004) << "q #" << k;
    for (size_t i = 0; i < p.ids.size(); ++i) {
      // 4.5 standard errors of a frequency over kN draws.
      const double sigma = std::sqrt(p.p[i] * (1 - p.p[i]) / kN);
      EXPECT_NEAR(s.frequency[p.ids[i]], p.p[i], 4.5 * sigma) << "token " << p.ids[i] << ", q #" << k;
    }
    EXPECT_EQ(s.frequency.count(1), 0u) << "a token p gives no mass never comes out";
  }
}

TEST(SpeculativeRule, AcceptingEveryGuessOrResamplingFromPWouldNotKeepP) {
  // What the rule guards against, in numbers: with q flatter than p, accepting every guess gives q, and resampling
  // a rejected guess from p (not p - q) over-weights what q under-weights.
  const SparseDistribution p = dist({0, 1}, {0.9f, 0.1f});
  const SparseDistribution q = dist({0, 1}, {0.5f, 0.5f});
  std::mt19937_64 rng(3);
  constexpr int kN = 200000;
  double from_p_resampling = 0;
  for (int i = 0; i < kN; ++i) {
    const int32_t guess = q.draw(uniform01(rng));
    const double u = uniform01(rng), u2 = uniform01(rng);
    const bool accept = u * q.probability(guess) < p.probability(guess);
    from_p_resampling += (accept ? guess : p.draw(u2)) == 0;
  }
  // Accepted 0: 0.5; rejected (1 accepted only 0.2 of the time): 0.4 of draws, of which p.draw gives 0 90 %.
  EXPECT_NEAR(from_p_resampling / kN, 0.5 + 0.4 * 0.9, 0.005);
  EXPECT_GT(std::abs(from_p_resampling / kN - 0.9), 0.02);
  EXPECT_NEAR(simulate(p, q, kN, 4).frequency[0], 0.9, 0.005);
}

TEST(SpeculativeRule, EdgeCases) {
  const SparseDistribution p = dist({3, 4}, {0.6f, 0.4f});
  // A guess p gives no mass is never accepted; its replacement comes from p.
  const GuessVerdict banned = verify_guess(p, dist({3, 4, 8}, {0.2f, 0.2f, 0.6f}), 8, 0.0, 0.5);
  EXPECT_FALSE(banned.accepted);
  EXPECT_TRUE(banned.token == 3 || banned.token == 4);
  // q == p: always accepted, whatever the uniform.
  EXPECT_TRUE(verify_guess(p, p, 4, 0.999999, 0.5).accepted);
  // The draw: ties to the cumulative order, zero-probability tokens skipped, u near 1 gives the last with mass.
  EXPECT_EQ(dist({1, 2, 3}, {0.5f, 0.0f, 0.5f}).draw(0.5), 3);
  EXPECT_EQ(dist({1, 2, 3}, {0.5f, 0.5f, 0.0f}).draw(0.9999999), 2);
  EXPECT_EQ(SparseDistribution{}.draw(0.5), -1);
  EXPECT_EQ(p.probability(5), 0.0f);
}

TEST(SamplerChainDistribution, IsWhatSampleDrawsFrom) {
  SamplingConfig c;
  c.temperature = 0.7f;
  c.top_k = 3;
  c.seed = 11;
  SamplerChain chain = SamplerChain::from_config(c);
  const std::vector<float> logits = {1.0f, 3.0f, 0.5f, 2.5f, -1.0f, 2.0f};
  const SparseDistribution d = chain.distribution(logits.data(), static_cast<int32_t>(logits.size()));
  ASSERT_EQ(d.ids, (std::vector<int32_t>{1, 3, 5}));  // the top 3, by id
  const double z = std::exp(3.0 / 0.7) + std::exp(2.5 / 0.7) + std::exp(2.0 / 0.7);
  EXPECT_NEAR(d.p[0], std::exp(3.0 / 0.7) / z, 1e-6);
  EXPECT_NEAR(d.p[1], std::exp(2.5 / 0.7) / z, 1e-6);
  // No random number was drawn: the chain's next draw is its first.
  SamplerChain fresh = SamplerChain::from_config(c);
  EXPECT_EQ(chain.sample(logits.data(), 6), fresh.sample(logits.data(), 6));
  // Sampling follows it: 20,000 draws within 4.5 standard errors of each probability.
  std::map<int32_t, int> counts;
  for (int i = 0; i < 20000; ++i) ++counts[chain.sample(logits.data(), 6)];
  for (size_t i = 0; i < d.ids.size(); ++i) {
    EXPECT_NEAR(counts[d.ids[i]] / 20000.0, d.p[i], 4.5 * std::sqrt(d.p[i] * (1 - d.p[i]) / 20000)) << d.ids[i];
  }
  // Greedy: the argmax alone.
  SamplingConfig greedy_config;
  greedy_config.temperature = 0.0f;
  SamplerChain greedy = SamplerChain::from_config(greedy_config);
  const SparseDistribution g = greedy.distribution(logits.data(), 6);
  EXPECT_EQ(g.ids, std::vector<int32_t>{1});
  EXPECT_EQ(g.p, std::vector<float>{1.0f});
}

}  // namespace
}  // namespace kairo::sampling
