// text_without_gbnf against the obvious oracle (the marker is not a substring): random texts over an alphabet made
// of the markers' own characters, so near misses, repeats of the first character and partial markers abound.
#include "grammar/text_without.h"

#include <gtest/gtest.h>

#include <random>

#include "grammar/byte_grammar.h"
#include "grammar/gbnf_parser.h"
#include "grammar/matcher.h"

namespace kairo::grammar {
namespace {

bool accepts(const ByteGrammar& g, const std::string& text) {
  GrammarMatcher m(std::make_shared<StackArena>(g), 0);
  return m.accept(text) && m.can_end();
}

ByteGrammar compile(const std::vector<std::string_view>& markers) {
  auto body = text_without_gbnf(markers);
  EXPECT_TRUE(body.ok()) << body.error().message;
  auto g = compile_gbnf("root ::= " + *body + "\n");
  EXPECT_TRUE(g.ok()) << g.error().message;
  return std::move(*g);
}

void expect_oracle(const std::vector<std::string_view>& markers, const std::vector<std::string>& alphabet) {
  const ByteGrammar g = compile(markers);
  std::mt19937 rng(5);
  int with_marker = 0;
  for (int i = 0; i < 3000; ++i) {
    std::string text;
    const int n = std::uniform_int_distribution<int>(0, 30)(rng);
    for (int k = 0; k < n; ++k) text += alphabet[std::uniform_int_distribution<size_t>(0, alphabet.size() - 1)(rng)];
    // Now and then a whole marker somewhere.
    if (i % 5 == 0) {
      text.insert(std::uniform_int_distribution<size_t>(0, text.size())(rng), std::string(markers[i % markers.size()]));
    }
    bool contains = false;
    for (std::string_view m : markers) contains = contains || text.find(m) != std::string::npos;
    with_marker += contains;
    EXPECT_EQ(accepts(g, text), !contains) << text;
  }
  EXPECT_GT(with_marker, 500);
}

TEST(TextWithout, OneMarker) {
  expect_oracle({"<tool_call>"}, {"<", "t", "o", "l", "_", "c", "a", ">", "x", "\n", "<tool_", "é"});
}

TEST(TextWithout, TwoMarkersSharingAPrefix) {
  expect_oracle({"</parameter>", "</tool_call>"}, {"<", "/", "p", "a", "r", "t", "o", "l", "_", "c", ">", "</", "q"});
}

TEST(TextWithout, MultibyteMarker) {
  // DeepSeek's section marker; its single-call sibling shares a long prefix and is fine.
  expect_oracle({"<｜tool▁calls▁begin｜>"}, {"<", "｜", "tool", "▁", "call", "s", "begin", "<｜tool▁call▁begin｜>", "|"});
}

TEST(TextWithout, RefusesMarkersItCannotHandle) {
  EXPECT_FALSE(text_without_gbnf({}).ok());
  EXPECT_FALSE(text_without_gbnf({"<"}).ok());                // one character
  EXPECT_FALSE(text_without_gbnf({"<a>", "[b]"}).ok());       // different first characters
  EXPECT_FALSE(text_without_gbnf({"<a<b>"}).ok());            // the first character again inside
}

}  // namespace
}  // namespace kairo::grammar
