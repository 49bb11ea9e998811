#include "engine/stop_matcher.h"

#include <gtest/gtest.h>

namespace kairo::engine {
namespace {

TEST(StopMatcher, HoldsBackPossibleStopPrefixesAcrossPushes) {
  StopMatcher m({"END", "\n\n"});
  EXPECT_EQ(m.push("hello E"), "hello ");
  EXPECT_EQ(m.push("N"), "");
  EXPECT_EQ(m.push("X"), "ENX");
  EXPECT_EQ(m.push(" a\n"), " a");
  EXPECT_EQ(m.push("\nrest"), "");
  EXPECT_TRUE(m.stopped());
  EXPECT_EQ(m.matched(), "\n\n");
  EXPECT_EQ(m.push("more"), "");
}

TEST(StopMatcher, StopSplitOverManyTokens) {
  StopMatcher m({"<|end|>"});
  std::string out;
  for (const char* piece : {"ok <", "|", "en", "d|", ">tail"}) out += m.push(piece);
  EXPECT_EQ(out, "ok ");
  EXPECT_TRUE(m.stopped());
}

TEST(StopMatcher, EarliestMatchWins) {
  StopMatcher m({"bc", "abcd"});
  EXPECT_EQ(m.push("xabcd"), "x");
  EXPECT_EQ(m.matched(), "abcd");
}

TEST(StopMatcher, FlushReleasesHeldText) {
  StopMatcher m({"STOP"});
  EXPECT_EQ(m.push("abc ST"), "abc ");
  EXPECT_EQ(m.flush(), "ST");
  EXPECT_FALSE(m.stopped());
}

TEST(StopMatcher, NoStopsPassesThrough) {
  StopMatcher m({"", ""});
  EXPECT_EQ(m.push("anything"), "anything");
}

}  // namespace
}  // namespace kairo::engine
