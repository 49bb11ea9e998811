#include "grammar/matcher.h"

#include <gtest/gtest.h>

#include <random>

#include "grammar/gbnf_parser.h"
#include "grammar_files.h"
#include "reference_matcher.h"

namespace kairo::grammar {
namespace {

std::shared_ptr<StackArena> arena_for(const GrammarAst& ast) {
  auto g = lower_grammar(ast);
  EXPECT_TRUE(g) << g.error().message;
  return std::make_shared<StackArena>(std::move(*g));
}

bool pda_full_match(const std::shared_ptr<StackArena>& arena, const std::string& s) {
  GrammarMatcher m(arena, 0);
  for (char c : s) {
    if (!m.accept(std::string_view(&c, 1))) return false;
  }
  return m.can_end();
}

std::string mutate(std::string s, std::mt19937& rng) {
  const int edits = std::uniform_int_distribution<int>(1, 3)(rng);
  static const std::string kAlphabet = "{}[]\":,. -+*/=()\n\\abcxyz019eEtfnru_;<>\x7f\xc3\xa9\xe2\x80";
  for (int e = 0; e < edits; ++e) {
    const size_t at = s.empty() ? 0 : std::uniform_int_distribution<size_t>(0, s.size() - 1)(rng);
    const char c = kAlphabet[std::uniform_int_distribution<size_t>(0, kAlphabet.size() - 1)(rng)];
    switch (std::uniform_int_distribution<int>(0, 2)(rng)) {
      case 0: s.insert(s.begin() + static_cast<long>(at), c); break;
      case 1: if (!s.empty()) s.erase(at, 1); break;
      default: if (!s.empty()) s[at] = c; break;
    }
  }
  return s;
}

class MatcherVsReference : public ::testing::TestWithParam<const char*> {};

// Accept/reject of sampled strings, their mutations and random strings equals the naive recognizer's.
TEST_P(MatcherVsReference, FullMatchAgreesOnSampledMutatedAndRandomStrings) {
  auto ast = parse_gbnf(testing::read_grammar_file(GetParam()));
  ASSERT_TRUE(ast) << ast.error().message;
  auto arena = arena_for(*ast);
  std::mt19937 rng(1234);
  int positives = 0, negatives = 0, samples = 0;
  while (samples < 300) {
    auto s = testing::sample_from_grammar(*ast, rng, 160);
    if (!s) continue;
    ++samples;
    ASSERT_TRUE(testing::reference_full_match(*ast, *s)) << "the sampler made a string the reference rejects: " << *s;
    ASSERT_TRUE(pda_full_match(arena, *s)) << GetParam() << ": rejected a sampled string: " << *s;
    ++positives;
    for (int k = 0; k < 3; ++k) {
      const std::string m = mutate(*s, rng);
      const bool expected = testing::reference_full_match(*ast, m);
      ASSERT_EQ(pda_full_match(arena, m), expected) << GetParam() << ": " << m;
      (expected ? positives : negatives)++;
    }
  }
  for (int i = 0; i < 300; ++i) {
    std::string r;
    const int len = std::uniform_int_distribution<int>(0, 12)(rng);
    for (int k = 0; k < len; ++k) r += "{}[]\":,0a- \n=(x+"[std::uniform_int_distribution<int>(0, 16)(rng)];
    ASSERT_EQ(pda_full_match(arena, r), testing::reference_full_match(*ast, r)) << GetParam() << ": " << r;
  }
  EXPECT_GT(negatives, 100) << "the mutations should produce rejected strings";
}

INSTANTIATE_TEST_SUITE_P(Grammars, MatcherVsReference,
                         ::testing::Values("json.gbnf", "arithmetic.gbnf", "list.gbnf", "c_like.gbnf"),
                         [](const auto& info) {
                           std::string n = info.param;
                           return n.substr(0, n.find('.'));
                         });

TEST(GrammarMatcher, ChunksAreAllOrNothing) {
  auto arena = std::make_shared<StackArena>(*compile_gbnf("root ::= \"ab\" [0-9]+\n"));
  GrammarMatcher m(arena);
  EXPECT_FALSE(m.accept("ax"));
  EXPECT_TRUE(m.accept("a"));  // the failed chunk left no trace
  EXPECT_FALSE(m.can_end());
  EXPECT_TRUE(m.accept("b1"));
  EXPECT_TRUE(m.can_end());
  EXPECT_TRUE(m.can_continue());
  EXPECT_TRUE(m.accept("23"));
  EXPECT_FALSE(m.accept("x"));
  EXPECT_TRUE(m.can_end());
}

TEST(GrammarMatcher, RollbackRestoresEarlierStatesAndCopiesAreIndependent) {
  auto arena = std::make_shared<StackArena>(*compile_gbnf(testing::read_grammar_file("json.gbnf")));
  GrammarMatcher m(arena, 4);
  ASSERT_TRUE(m.accept("{\"a\""));
  const StackSet after_key = m.stacks();
  ASSERT_TRUE(m.accept(":"));
  ASSERT_TRUE(m.accept(" 1"));
  GrammarMatcher fork = m;  // n > 1 choices fork here
  ASSERT_TRUE(m.accept("}"));
  EXPECT_TRUE(m.can_end());
  m.rollback(3);
  EXPECT_EQ(m.stacks(), after_key);
  EXPECT_FALSE(m.accept("}"));
  EXPECT_TRUE(m.accept(":[]}"));
  EXPECT_TRUE(m.can_end());
  // The fork did not see any of that.
  EXPECT_FALSE(fork.can_end());
  EXPECT_TRUE(fork.accept(", \"b\": true}"));
  EXPECT_TRUE(fork.can_end());
  // History is bounded: at most max_rollback chunks.
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(fork.accept(i == 0 ? "\n" : " ") || i > 0);
  EXPECT_LE(fork.rollback_depth(), 4u);
}

TEST(GrammarMatcher, NullableRepetitionAndDeepNestingTerminate) {
  auto arena = std::make_shared<StackArena>(*compile_gbnf("root ::= (\"a\"? \"b\"?)* \"c\"\n"));
  GrammarMatcher m(arena);
  EXPECT_TRUE(m.accept("abbac"));
  EXPECT_TRUE(m.can_end());
  auto json = std::make_shared<StackArena>(*compile_gbnf(testing::read_grammar_file("json.gbnf")));
  GrammarMatcher deep(json, 0);
  std::string open = "{\"a\":";
  for (int i = 0; i < 2000; ++i) open += "[";
  ASSERT_TRUE(deep.accept(open));
  for (int i = 0; i < 2000; ++i) ASSERT_TRUE(deep.accept("]"));
  EXPECT_TRUE(deep.accept("}"));
  EXPECT_TRUE(deep.can_end());
}

TEST(GrammarMatcher, MultiByteClassesMatchWholeCharactersOnly) {
  auto arena = std::make_shared<StackArena>(*compile_gbnf("root ::= [^a]+\n"));
  GrammarMatcher m(arena, 0);
  EXPECT_TRUE(m.accept("\xc3"));  // first byte of é: a prefix of a member
  EXPECT_FALSE(m.can_end());
  EXPECT_TRUE(m.accept("\xa9"));
  EXPECT_TRUE(m.can_end());
  EXPECT_FALSE(m.accept("\xed\xa0\x80"));  // an encoded surrogate is not UTF-8
  EXPECT_FALSE(m.accept("\xc0\x80"));      // nor an overlong encoding
  EXPECT_FALSE(m.accept("a"));
}

}  // namespace
}  // namespace kairo::grammar
