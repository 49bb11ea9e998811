#include "grammar/token_masker.h"

#include <gtest/gtest.h>

#include <map>
#include <random>

#include "gguf/gguf_file.h"
#include "grammar/gbnf_parser.h"
#include "grammar_files.h"
#include "reference_matcher.h"
#include "tokenizer/tokenizer.h"

namespace kairo::grammar {
namespace {

struct Vocab {
  std::vector<std::string> bytes;
  std::vector<int32_t> eog;
};

// Token bytes of a real vocabulary: what each token adds to the text; control and end-of-generation tokens
// contribute nothing to match.
Vocab load_vocab(const std::string& file) {
  auto gguf = gguf::File::open(kairo::testing::shared_path("vocab/" + file));
  EXPECT_TRUE(gguf) << gguf.error().message;
  auto tok = tokenizer::Tokenizer::from_gguf(*gguf);
  EXPECT_TRUE(tok) << tok.error().message;
  Vocab v;
  for (int32_t id = 0; id < (*tok)->n_vocab(); ++id) {
    v.bytes.push_back((*tok)->is_eog(id) || (*tok)->is_control(id) ? "" : (*tok)->token_to_piece(id));
  }
  v.eog = (*tok)->eog_ids();
  return v;
}

std::vector<uint64_t> brute_force_mask(const GrammarMatcher& m, const Vocab& v) {
  std::vector<uint64_t> mask((v.bytes.size() + 63) / 64, 0);
  for (size_t t = 0; t < v.bytes.size(); ++t) {
    bool ok = false;
    if (std::find(v.eog.begin(), v.eog.end(), static_cast<int32_t>(t)) != v.eog.end()) {
      ok = m.can_end();
    } else if (!v.bytes[t].empty()) {
      GrammarMatcher copy = m;
      ok = copy.accept(v.bytes[t]);
    }
    if (ok) mask[t >> 6] |= uint64_t{1} << (t & 63);
  }
  return mask;
}

std::string describe_difference(const std::vector<uint64_t>& got, const std::vector<uint64_t>& want, const Vocab& v) {
  std::string out;
  for (size_t t = 0; t < v.bytes.size() && out.size() < 400; ++t) {
    const bool g = (got[t >> 6] >> (t & 63)) & 1, w = (want[t >> 6] >> (t & 63)) & 1;
    if (g != w) out += (g ? " +" : " -") + std::to_string(t) + "'" + v.bytes[t] + "'";
  }
  return out;
}

TEST(TokenTrie, EveryNonEmptyTokenEndsAtTheNodeOfItsBytes) {
  const Vocab v = load_vocab("ggml-vocab-llama-spm.gguf");
  TokenTrie trie(v.bytes);
  size_t n_tokens = 0;
  const auto& nodes = trie.nodes();
  // Rebuild each node's byte path by walking the preorder layout and compare with the tokens stored there.
  std::vector<std::string> path(trie.max_depth() + 1);
  for (size_t i = 1; i < nodes.size(); ++i) {
    path[nodes[i].depth] = path[nodes[i].depth - 1] + static_cast<char>(nodes[i].byte);
    ASSERT_GT(nodes[i].subtree_end, i);
    for (uint32_t t = nodes[i].token_begin; t < nodes[i].token_end; ++t) {
      ASSERT_EQ(v.bytes[trie.tokens()[t]], path[nodes[i].depth]);
      ++n_tokens;
    }
  }
  size_t expected = 0;
  for (const auto& b : v.bytes) expected += !b.empty();
  EXPECT_EQ(n_tokens, expected);
}

struct MaskCase {
  const char* grammar;
  const char* vocab;
};

class MaskVsBruteForce : public ::testing::TestWithParam<MaskCase> {};

// At random positions of sampled strings (including inside multi-byte characters), the cached mask equals
// feeding every token's bytes to the matcher.
// Masks at random points of sampled texts against feeding every token; caches of max_cache_bytes.
void expect_masks_equal_brute_force(const MaskCase& param, size_t max_cache_bytes) {
  static std::map<std::string, Vocab> vocabs;
  if (!vocabs.count(param.vocab)) vocabs[param.vocab] = load_vocab(param.vocab);
  const Vocab& v = vocabs[param.vocab];
  auto ast = parse_gbnf(testing::read_grammar_file(param.grammar));
  ASSERT_TRUE(ast) << ast.error().message;
  auto arena = std::make_shared<StackArena>(*lower_grammar(*ast));
  TokenMasker masker(arena, std::make_shared<TokenTrie>(v.bytes), v.eog, max_cache_bytes);
  std::mt19937 rng(99);
  std::vector<uint64_t> mask(masker.mask_words());
  int checked = 0;
  for (int attempt = 0; checked < 24 && attempt < 500; ++attempt) {
    auto s = testing::sample_from_grammar(*ast, rng, 120);
    if (!s) continue;
    const size_t cut = std::uniform_int_distribution<size_t>(0, s->size())(rng);
    GrammarMatcher m(arena, 0);
    ASSERT_TRUE(m.accept(s->substr(0, cut)));
    masker.fill_mask(m, mask);
    const auto want = brute_force_mask(m, v);
    ASSERT_EQ(mask, want) << param.grammar << " after " << "\"" << s->substr(0, cut) << "\"" << ":"
                          << describe_difference(mask, want, v);
    // Served again from the whole-stack cache: the same answer.
    masker.fill_mask(m, mask);
    ASSERT_EQ(mask, want);
    ++checked;
  }
  EXPECT_EQ(checked, 24);
  EXPECT_GT(masker.stats().stack_hits, 0u);
  EXPECT_GT(masker.stats().walk_sets, 0u);
}

TEST_P(MaskVsBruteForce, MaskEqualsFeedingEveryToken) { expect_masks_equal_brute_force(GetParam(), size_t{64} << 20); }

// Caches so small that the mask caches and the walk's DFA are cleared over and over, mid-text: the same masks.
TEST(TokenMasker, TinyCachesGiveTheSameMasks) {
  expect_masks_equal_brute_force(MaskCase{"json.gbnf", "ggml-vocab-llama-spm.gguf"}, 0);
  expect_masks_equal_brute_force(MaskCase{"c_like.gbnf", "ggml-vocab-llama-spm.gguf"}, 0);
}

INSTANTIATE_TEST_SUITE_P(Grammars, MaskVsBruteForce,
                         ::testing::Values(MaskCase{"json.gbnf", "ggml-vocab-llama-spm.gguf"},
                                           MaskCase{"arithmetic.gbnf", "ggml-vocab-llama-spm.gguf"},
                                           MaskCase{"list.gbnf", "ggml-vocab-llama-spm.gguf"},
                                           MaskCase{"c_like.gbnf", "ggml-vocab-llama-spm.gguf"},
                                           MaskCase{"json.gbnf", "ggml-vocab-deepseek-llm.gguf"}),
                         [](const auto& info) {
                           std::string g = info.param.grammar;
                           std::string v = info.param.vocab;
                           return g.substr(0, g.find('.')) + "_" + (v.find("llama") != std::string::npos ? "llama" : "deepseek");
                         });

TEST(TokenMasker, EndOfGenerationOnlyWhenTheMatchCanEnd) {
  std::vector<std::string> bytes = {"", "a", "ab", "b", "abc"};
  auto arena = std::make_shared<StackArena>(*compile_gbnf("root ::= \"a\" \"b\"?\n"));
  TokenMasker masker(arena, std::make_shared<TokenTrie>(bytes), {0});
  GrammarMatcher m(arena);
  std::vector<uint64_t> mask(1);
  masker.fill_mask(m, mask);
  EXPECT_EQ(mask[0], 0b00110u);  // "a", "ab"
  ASSERT_TRUE(masker.accept_token(m, 1));
  masker.fill_mask(m, mask);
  EXPECT_EQ(mask[0], 0b01001u);  // EOG, "b"
  EXPECT_TRUE(masker.accept_token(m, 0));
  EXPECT_FALSE(masker.accept_token(m, 4));
  EXPECT_FALSE(masker.accept_token(m, 99));
}

}  // namespace
}  // namespace kairo::grammar
