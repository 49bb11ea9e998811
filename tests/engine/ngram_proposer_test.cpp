// Prompt-lookup proposals: the most recent earlier occurrence of the longest matching suffix, what followed it,
// loops continued through the guesses themselves, and nothing when nothing matches.
#include "engine/ngram_proposer.h"

#include <gtest/gtest.h>

namespace kairo::engine {
namespace {

std::vector<int32_t> propose(NgramProposer p, const std::vector<int32_t>& tokens, int k) {
  std::vector<int32_t> out{-1};  // cleared by propose
  p.propose(tokens, 0, k, out);
  return out;
}

TEST(NgramProposer, ProposesWhatFollowedTheSuffixEarlier) {
  const NgramProposer p({2, 4});
  // ... 7 8 9 10 11 ... 7 8 -> 9 10 11
  EXPECT_EQ(propose(p, {1, 7, 8, 9, 10, 11, 2, 3, 7, 8}, 3), (std::vector<int32_t>{9, 10, 11}));
  // k beyond what followed: the copy runs on into the suffix itself (7 8 follows 11 2 3 here).
  EXPECT_EQ(propose(p, {1, 7, 8, 9, 2, 7, 8}, 5), (std::vector<int32_t>{9, 2, 7, 8, 9}));
}

TEST(NgramProposer, PrefersTheLongestSuffixAndThenTheLatestOccurrence) {
  const NgramProposer p({1, 3});
  // "5 6" occurs twice; the 3-gram "4 5 6" only once, followed by 40.
  EXPECT_EQ(propose(p, {4, 5, 6, 40, 9, 5, 6, 50, 4, 5, 6}, 1), (std::vector<int32_t>{40}));
  // Only a 2-gram matches: its latest occurrence wins (followed by 50, not 40).
  EXPECT_EQ(propose(p, {1, 5, 6, 40, 2, 5, 6, 50, 3, 5, 6}, 1), (std::vector<int32_t>{50}));
}

TEST(NgramProposer, ALoopShorterThanKIsProposedForItsWholeLength) {
  const NgramProposer p({2, 4});
  EXPECT_EQ(propose(p, {9, 1, 2, 1, 2, 1, 2}, 4), (std::vector<int32_t>{1, 2, 1, 2}));
  EXPECT_EQ(propose(p, {3, 3, 3}, 3), (std::vector<int32_t>{3, 3, 3}));
}

TEST(NgramProposer, NothingMatchesNothingIsProposed) {
  const NgramProposer p({2, 4});
  EXPECT_TRUE(propose(p, {1, 2, 3, 4, 5, 6}, 4).empty());
  EXPECT_TRUE(propose(p, {1, 2, 1}, 4).empty());  // "2 1" never occurred before; min_n 2 ignores the lone 1
  EXPECT_TRUE(propose(p, {1}, 4).empty());
  EXPECT_TRUE(propose(p, {}, 4).empty());
  EXPECT_TRUE(propose(p, {1, 2, 1, 2}, 0).empty());
  const NgramProposer unigram({1, 1});
  EXPECT_EQ(propose(unigram, {1, 2, 1}, 2), (std::vector<int32_t>{2, 1}));
}

}  // namespace
}  // namespace kairo::engine
