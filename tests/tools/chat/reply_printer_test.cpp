// How a streaming reply is printed, and what of it the conversation keeps.
#include "chat/reply_printer.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>

namespace kairo::tools::chat {
namespace {

// A FILE* whose bytes the test reads back.
class Captured {
 public:
  Captured() : file_(::open_memstream(&data_, &size_)) {}
  ~Captured() {
    std::fclose(file_);
    std::free(data_);
  }
  std::FILE* file() { return file_; }
  std::string text() {
    std::fflush(file_);
    return std::string(data_, size_);
  }

 private:
  char* data_ = nullptr;
  size_t size_ = 0;
  std::FILE* file_;
};

TEST(ReplyPrinter, PrintsAPlainReplyAsItComes) {
  Captured out;
  ReplyPrinter p(out.file(), ReplyStyle{}, /*thinking_model=*/false, /*opened_in_prompt=*/false);
  p.push("Hello");
  p.push(", <think>world");
  p.finish();
  EXPECT_EQ(out.text(), "Hello, <think>world");
  EXPECT_EQ(p.answer(), "Hello, <think>world");
  EXPECT_FALSE(p.at_line_start());
}

TEST(ReplyPrinter, ShowsThinkingApartAndKeepsOnlyTheAnswer) {
  Captured out;
  ReplyPrinter p(out.file(), ReplyStyle{}, /*thinking_model=*/true, /*opened_in_prompt=*/false);
  p.push("<think>Let me th");
  p.push("ink.</thi");
  p.push("nk>\n\nIt is 4.\n");
  p.finish();
  EXPECT_EQ(out.text(), "Thinking...\nLet me think.\n...done thinking.\n\nIt is 4.\n");
  EXPECT_EQ(p.answer(), "It is 4.\n");
  EXPECT_TRUE(p.at_line_start());
}

TEST(ReplyPrinter, DimsTheThinkingWithColours) {
  Captured out;
  ReplyPrinter p(out.file(), ReplyStyle{.colour = true}, true, /*opened_in_prompt=*/true);
  p.push("hmm</think>yes");
  p.finish();
  EXPECT_EQ(out.text(), "\x1b[2mThinking...\nhmm\n...done thinking.\n\n\x1b[0myes");
}

TEST(ReplyPrinter, HidesThinkingWhenAsked) {
  Captured out;
  ReplyPrinter p(out.file(), ReplyStyle{.thinking = ThinkingDisplay::Hide}, true, /*opened_in_prompt=*/true);
  p.push("secret plans</think>");
  EXPECT_FALSE(p.wrote_anything());
  p.push("The answer.");
  p.finish();
  EXPECT_EQ(out.text(), "The answer.");
  EXPECT_EQ(p.answer(), "The answer.");
}

TEST(ReplyPrinter, AReplyCutShortWhileThinkingHasNoAnswer) {
  Captured out;
  ReplyPrinter p(out.file(), ReplyStyle{.colour = true}, true, /*opened_in_prompt=*/true);
  p.push("still thinking");
  p.finish();
  EXPECT_EQ(out.text(), "\x1b[2mThinking...\nstill thinking\x1b[0m");  // the dimming ends with the reply
  EXPECT_EQ(p.answer(), "");
}

TEST(ReplyPrinter, OnATerminalControlCharactersAreDropped) {
  Captured out;
  ReplyPrinter p(out.file(), ReplyStyle{.terminal = true}, false, false);
  p.push("a\x1b[31mb\r\n");
  p.finish();
  EXPECT_EQ(out.text(), "a[31mb\n");
  EXPECT_EQ(p.answer(), "a\x1b[31mb\r\n");  // the conversation keeps what the model said
}

}  // namespace
}  // namespace kairo::tools::chat
