#include "grammar/gbnf_parser.h"

#include <gtest/gtest.h>

#include "grammar/byte_grammar.h"
#include "grammar_files.h"

namespace kairo::grammar {
namespace {

std::string parse_error(const std::string& text) {
  auto r = parse_gbnf(text);
  return r ? "" : r.error().message;
}

std::string compile_error(const std::string& text) {
  auto r = compile_gbnf(text);
  return r ? "" : r.error().message;
}

TEST(GbnfParser, ParsesTheTestGrammars) {
  for (const char* name : {"json.gbnf", "arithmetic.gbnf", "list.gbnf", "c_like.gbnf"}) {
    auto g = compile_gbnf(testing::read_grammar_file(name));
    ASSERT_TRUE(g) << name << ": " << g.error().message;
    EXPECT_GT(g->elements.size(), 10u) << name;
  }
}

TEST(GbnfParser, RulesAlternativesAndRepetitions) {
  auto ast = parse_gbnf("root ::= \"a\" b* | [x-z]+ (c | \"d\"){2,3}\nb ::= \"b\"?\nc ::= .\n");
  ASSERT_TRUE(ast) << ast.error().message;
  ASSERT_EQ(ast->rules.size(), 3u);
  const auto& root = ast->rules[0];
  ASSERT_EQ(root.alternatives.size(), 2u);
  ASSERT_EQ(root.alternatives[0].size(), 2u);
  EXPECT_EQ(root.alternatives[0][0].kind, AstNode::Kind::kLiteral);
  EXPECT_EQ(root.alternatives[0][1].kind, AstNode::Kind::kRepeat);
  EXPECT_EQ(root.alternatives[0][1].max, kUnboundedRepeat);
  const auto& braces = root.alternatives[1][1];
  EXPECT_EQ(braces.kind, AstNode::Kind::kRepeat);
  EXPECT_EQ(braces.min, 2u);
  EXPECT_EQ(braces.max, 3u);
  EXPECT_EQ(braces.alternatives[0][0].kind, AstNode::Kind::kGroup);
  const auto& any = ast->rules[2].alternatives[0][0];
  ASSERT_EQ(any.ranges.size(), 1u);
  EXPECT_EQ(any.ranges[0].hi, kMaxCodepoint);
}

TEST(GbnfParser, EscapesAndNegatedClasses) {
  auto ast = parse_gbnf("root ::= \"\\n\\t\\\"\\x41\\u00e9\\U0001F600\" [^a-c\\]]\n");
  ASSERT_TRUE(ast) << ast.error().message;
  const auto& seq = ast->rules[0].alternatives[0];
  EXPECT_EQ(seq[0].literal, (std::u32string{U'\n', U'\t', U'"', U'A', 0xE9, 0x1F600}));
  const auto& cls = seq[1].ranges;
  ASSERT_EQ(cls.size(), 3u);  // [0, '`'], ['d', '\\' - 1 .. ], gaps around a-c and ']'
  EXPECT_EQ(cls[0].lo, 0u);
  EXPECT_EQ(cls[0].hi, static_cast<uint32_t>(']') - 1);
  EXPECT_EQ(cls[1].lo, static_cast<uint32_t>(']') + 1);
  EXPECT_EQ(cls[1].hi, static_cast<uint32_t>('a') - 1);
  EXPECT_EQ(cls[2].lo, static_cast<uint32_t>('c') + 1);
  EXPECT_EQ(cls[2].hi, kMaxCodepoint);
}

TEST(GbnfParser, CommentsAndMultiLineRules) {
  auto ast = parse_gbnf("# a comment\nroot ::=\n  \"a\" # trailing\n  | (\n  \"b\"\n  \"c\" )\n\nx ::= \"x\"\n");
  ASSERT_TRUE(ast) << ast.error().message;
  ASSERT_EQ(ast->rules.size(), 2u);
  EXPECT_EQ(ast->rules[0].alternatives.size(), 2u);
}

TEST(GbnfParser, ErrorsNameTheLineAndWhatToChange) {
  EXPECT_EQ(parse_error(""), "the grammar has no rules; write at least `root ::= ...`");
  EXPECT_EQ(parse_error("root = \"a\"\n"), "grammar: line 1, column 6: expected '::=' after rule name 'root'");
  EXPECT_EQ(parse_error("root ::= \"a\n"), "grammar: line 1, column 12: unterminated string literal: add the closing '\"'");
  EXPECT_EQ(parse_error("root ::= [a-\n"), "grammar: line 1, column 13: unterminated character class: add the closing ']'");
  EXPECT_EQ(parse_error("root ::= (\"a\"\n"), "grammar: line 2, column 1: expected ')' to close the group, found the end of the grammar");
  EXPECT_EQ(parse_error("root ::= * \"a\"\n"), "grammar: line 1, column 11: '*' must follow an item to repeat");
  EXPECT_EQ(parse_error("root ::= \"a\"{3,2}\n"), "grammar: line 1, column 18: repetition {3,2} has its maximum below its minimum");
  EXPECT_EQ(parse_error("root ::= \"a\"{5000}\n"),
            "grammar: line 1, column 17: repetition bound above 1000; use '*' or '+' for an unbounded repetition");
  EXPECT_EQ(parse_error("root ::= \"\\q\"\n"),
            "grammar: line 1, column 12: unknown escape '\\q'; use \\n \\r \\t \\\\ \\\" \\[ \\] \\xHH \\uHHHH or \\UHHHHHHHH");
  EXPECT_EQ(parse_error("root ::= [z-a]\n"), "grammar: line 1, column 14: character range U+007A-U+0061 is reversed");
  EXPECT_EQ(parse_error("root ::= \"a\"\nroot ::= \"b\"\n"),
            "grammar: line 2, column 10: rule 'root' is defined twice; merge the definitions with '|'");
  EXPECT_EQ(parse_error("root ::= \"a\" ) \n"),
            "grammar: line 1, column 14: expected the end of the line after rule 'root', found \") \"");
  EXPECT_EQ(parse_error("root ::= \"\\uD800\"\n"), "grammar: line 1, column 17: escape U+D800 is not a Unicode scalar value");
}

TEST(ByteGrammar, RefusesWhatTheMatcherCannotRun) {
  EXPECT_EQ(compile_error("start ::= \"a\"\n"),
            "grammar: there is no 'root' rule; the grammar starts at `root ::= ...`");
  EXPECT_EQ(compile_error("root ::= value\n"), "grammar: line 1: rule 'value' is used but never defined");
  const std::string left = compile_error("root ::= expr\nexpr ::= expr \"+\" term | term\nterm ::= [0-9]\n");
  EXPECT_NE(left.find("left recursion (expr -> expr)"), std::string::npos) << left;
  // Through a nullable prefix: still left recursion.
  const std::string nullable = compile_error("root ::= ws root \"x\" | \"y\"\nws ::= \" \"?\n");
  EXPECT_NE(nullable.find("left recursion (root -> root)"), std::string::npos) << nullable;
  // Right recursion and repetition are fine.
  EXPECT_EQ(compile_error("root ::= \"a\" root | \"b\"\n"), "");
}

}  // namespace
}  // namespace kairo::grammar
