// Multi-line messages: backslash continuations, """ blocks, pasted lines.
#include "chat/message_assembler.h"

#include <gtest/gtest.h>

namespace kairo::tools::chat {
namespace {

TEST(MessageAssembler, OneLineIsOneMessage) {
  MessageAssembler a;
  const auto m = a.add("hello");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->text, "hello");
  EXPECT_FALSE(m->literal);
  EXPECT_FALSE(a.in_progress());
}

TEST(MessageAssembler, ABackslashContinuesTheMessage) {
  MessageAssembler a;
  EXPECT_FALSE(a.add("first \\"));
  EXPECT_TRUE(a.in_progress());
  EXPECT_FALSE(a.add("second\\"));
  const auto m = a.add("third");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->text, "first \nsecond\nthird");
  EXPECT_FALSE(m->literal);
}

TEST(MessageAssembler, TripleQuotesOpenAndCloseABlock) {
  MessageAssembler a;
  EXPECT_FALSE(a.add(R"(""")"));
  EXPECT_TRUE(a.in_progress());
  EXPECT_FALSE(a.add("line one\\"));  // no continuation inside a block: the backslash is text
  EXPECT_FALSE(a.add(""));
  const auto m = a.add(R"(last""")");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->text, "line one\\\n\nlast");
  EXPECT_TRUE(m->literal);
  EXPECT_FALSE(a.in_progress());
}

TEST(MessageAssembler, TextOnTheOpeningLineBelongsToTheBlock) {
  MessageAssembler a;
  EXPECT_FALSE(a.add(R"("""/system is a path)"));
  const auto m = a.add(R"(""")");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->text, "/system is a path");
  EXPECT_TRUE(m->literal);  // sent as a message, not run as a command
}

TEST(MessageAssembler, AOneLineBlock) {
  MessageAssembler a;
  const auto m = a.add(R"("""/help me""")");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->text, "/help me");
  EXPECT_TRUE(m->literal);
}

TEST(MessageAssembler, PastedLinesJoin) {
  MessageAssembler a;
  EXPECT_FALSE(a.add("def f():", /*continues=*/true));
  EXPECT_FALSE(a.add("    return 1", /*continues=*/true));
  const auto m = a.add("explain this");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->text, "def f():\n    return 1\nexplain this");
}

TEST(MessageAssembler, ResetDropsTheUnfinishedMessage) {
  MessageAssembler a;
  EXPECT_FALSE(a.add(R"(""")"));
  EXPECT_FALSE(a.add("half"));
  a.reset();
  EXPECT_FALSE(a.in_progress());
  EXPECT_EQ(a.add("fresh")->text, "fresh");
}

}  // namespace
}  // namespace kairo::tools::chat
