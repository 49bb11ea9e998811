// The reasoning splitter on the cases issue 19 names, whole and fed byte by byte (every split of every marker).
#include "server/reasoning_splitter.h"

#include <gtest/gtest.h>

namespace kairo::server {
namespace {

struct Split {
  std::string reasoning, content;
};

Split feed(const std::string& text, bool opened_in_prompt, size_t chunk) {
  ReasoningSplitter s(opened_in_prompt);
  Split out;
  for (size_t i = 0; i < text.size(); i += chunk) {
    const auto p = s.push(std::string_view(text).substr(i, chunk));
    out.reasoning += p.reasoning;
    out.content += p.content;
  }
  const auto p = s.flush();
  out.reasoning += p.reasoning;
  out.content += p.content;
  return out;
}

void expect_split(const std::string& text, bool opened, const std::string& reasoning, const std::string& content) {
  for (size_t chunk : {text.size() + 1, size_t{1}, size_t{2}, size_t{3}, size_t{5}}) {
    const Split got = feed(text, opened, chunk);
    EXPECT_EQ(got.reasoning, reasoning) << text << " in chunks of " << chunk;
    EXPECT_EQ(got.content, content) << text << " in chunks of " << chunk;
  }
}

TEST(ReasoningSplitter, ThinkingThenAnswer) {
  expect_split("<think>a</think>b", false, "a", "b");
  expect_split("<think>\nLet me see.\n</think>\n\nThe answer is 4.", false, "\nLet me see.\n", "The answer is 4.");
  expect_split("  \n<think>x</think>y", false, "x", "y");  // blanks before the block are dropped with it
}

TEST(ReasoningSplitter, TemplateOpenedTheBlock) {
  expect_split("a</think>b", true, "a", "b");
  expect_split("step 1 < step 2 </think> done", true, "step 1 < step 2 ", "done");
}

TEST(ReasoningSplitter, NoEndBeforeMaxTokensIsAllReasoning) {
  expect_split("<think>still thinking </thi", false, "still thinking </thi", "");
  expect_split("thinking on", true, "thinking on", "");
}

TEST(ReasoningSplitter, NoBlockIsAllContent) {
  expect_split("Hello <think> is a tag", false, "", "Hello <think> is a tag");
  expect_split("  <thin", false, "", "  <thin");     // half a marker at the end stays text
  expect_split("<thinking>x", false, "", "<thinking>x");
  expect_split("", false, "", "");
}

TEST(ReasoningSplitter, LookalikesInsideTheBlockStayReasoning) {
  expect_split("<think>a </th b </thinkx c</think>d", false, "a </th b </thinkx c", "d");
  expect_split("<think></think>", false, "", "");
  expect_split("<think>r</think>a</think>b", false, "r", "a</think>b");  // one block only
}

}  // namespace
}  // namespace kairo::server
