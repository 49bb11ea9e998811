// Tokenizer::encode_at_most: exactly encode()'s tokens for a text within the limit, and for a longer one a stop
// after little work whose tokens are the first of encode()'s (a stop never misjudges a text that fits).
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "synthetic_vocab.h"
#include "tokenizer/byte_level.h"
#include "tokenizer_test_util.h"

namespace kairo::tokenizer {
namespace {

using testing::kRealTokenizers;

const char* const kProse =
    "The lighthouse keeper climbed the stairs at dusk, counting each step as his father had, and lit the lamp "
    "over a sea that had swallowed 1,204 ships since 1851. ";

std::string prose(size_t n_bytes) {
  std::string s;
  while (s.size() < n_bytes) s += kProse;
  s.resize(n_bytes);
  return s;
}

bool is_prefix(const std::vector<int32_t>& part, const std::vector<int32_t>& whole) {
  return part.size() <= whole.size() && std::equal(part.begin(), part.end(), whole.begin());
}

size_t longest_token_text(const Tokenizer& tok) {
  size_t n = 0;
  for (const TokenData& t : tok.vocab().tokens) n = std::max(n, t.text.size());
  return n;
}

// Every limit from 0 to past the count: within the limit the tokens are encode()'s; past it, either a stop with
// the first of encode()'s tokens or (the count passed the limit only in the last word) all of them.
void check_every_limit(const Tokenizer& tok, const std::string& text, bool add_bos, bool parse_special) {
  const std::vector<int32_t> full = tok.encode(text, add_bos, parse_special);
  for (size_t limit = 0; limit <= full.size() + 2; ++limit) {
    const Tokenizer::Bounded b = tok.encode_at_most(text, add_bos, parse_special, limit);
    if (full.size() <= limit) {
      ASSERT_FALSE(b.stopped) << "limit " << limit << ", text: '" << text << "'";
      ASSERT_EQ(b.tokens, full) << "limit " << limit << ", text: '" << text << "'";
      ASSERT_EQ(b.n_bytes_read, text.size());
    } else if (b.stopped) {
      ASSERT_TRUE(is_prefix(b.tokens, full)) << "limit " << limit << ", text: '" << text << "'";
      ASSERT_LT(b.n_bytes_read, text.size());
    } else {
      ASSERT_EQ(b.tokens, full) << "limit " << limit << ", text: '" << text << "'";
    }
  }
}

TEST(BoundedEncode, TheVocabVectorsGiveEncodesTokensAtEveryLimit) {
  for (const char* rel : kRealTokenizers) {
    if (std::string(rel).find("vocab/") != 0) continue;  // the demo model has no .inp/.out vectors
    SCOPED_TRACE(rel);
    const Tokenizer& tok = testing::shared_tokenizer(rel);
    for (const auto& c : testing::read_vocab_cases(rel)) {
      // The vectors' own setting (no BOS, specials as text), then the server's (BOS, specials parsed).
      check_every_limit(tok, c.text, false, false);
      check_every_limit(tok, c.text, tok.add_bos_by_default(), true);
      ASSERT_EQ(tok.encode_at_most(c.text, false, false, c.ids.size()).tokens, c.ids) << "text: '" << c.text << "'";
    }
  }
}

TEST(BoundedEncode, AdversarialTextsGiveEncodesTokensAtEveryLimit) {
  // Runs of spaces, literal U+2581 (SentencePiece's own space mark), broken UTF-8 next to spaces, special tokens.
  const char* const parts[] = {" ",  "  ",   "a",       "the",   "\xE2\x96\x81", "\xE2", "\x96", "\x81", "\n",
                               "é",  "中",   "<s>",     "</s>",  "<|endoftext|>", "<|end|>", "'s",  "1234", ".",
                               "\xff", "😀", "Hello", " world", "<|assistant|>"};
  std::mt19937 rng(7);
  for (const char* rel : kRealTokenizers) {
    SCOPED_TRACE(rel);
    const Tokenizer& tok = testing::shared_tokenizer(rel);
    for (int round = 0; round < 150; ++round) {
      std::string text;
      for (int k = static_cast<int>(rng() % 16); k > 0; --k) text += parts[rng() % std::size(parts)];
      check_every_limit(tok, text, round % 2 == 0, round % 3 == 0);
    }
  }
}

TEST(BoundedEncode, APromptFarPastTheLimitStopsBeforeReadingMostOfIt) {
  const std::string text = prose(8u << 20);
  for (const char* rel : kRealTokenizers) {
    SCOPED_TRACE(rel);
    const Tokenizer& tok = testing::shared_tokenizer(rel);
    const Tokenizer::Bounded b = tok.encode_at_most(text, tok.add_bos_by_default(), true, 4096);
    EXPECT_TRUE(b.stopped);
    EXPECT_LE(b.tokens.size(), 4096u + 16);
    // Whatever the vocab: at most the limit's worth of its longest tokens, a few hundred kB of the 8 MB.
    EXPECT_LE(b.n_bytes_read, 4097 * longest_token_text(tok));
  }
}

TEST(BoundedEncode, StopsAtAWordOnceTheCountPassesTheLimit) {
  // A text short enough that its length alone does not prove it too long (under limit × the longest token), but
  // with several times the limit in tokens: encoding must stop inside it, at a word boundary, with the first of
  // encode()'s tokens.
  constexpr size_t kLimit = 2000;
  for (const char* rel : kRealTokenizers) {
    SCOPED_TRACE(rel);
    const Tokenizer& tok = testing::shared_tokenizer(rel);
    const std::string text = prose(kLimit * longest_token_text(tok) / 2);
    const std::vector<int32_t> full = tok.encode(text, false, true);
    ASSERT_GT(full.size(), 2 * kLimit);
    const Tokenizer::Bounded b = tok.encode_at_most(text, false, true, kLimit);
    EXPECT_TRUE(b.stopped);
    EXPECT_GT(b.n_bytes_read, 0u);  // it did encode words: not refused from its length
    EXPECT_LT(b.n_bytes_read, text.size() / 4);
    EXPECT_TRUE(is_prefix(b.tokens, full));
    EXPECT_LE(b.tokens.size(), kLimit + 16);  // at most one word past the limit
  }
}

TEST(BoundedEncode, WhitespaceThatAStripTokenSwallowsCountsForNothing) {
  // Phi-3's <|assistant|> (user-defined, RSTRIP) swallows the spaces after it: 100k bytes, a handful of tokens.
  const Tokenizer& tok = testing::shared_tokenizer("vocab/ggml-vocab-phi-3.gguf");
  const std::string text = "<|assistant|>" + std::string(100000, ' ') + "hi";
  const std::vector<int32_t> full = tok.encode(text, true, true);
  ASSERT_LE(full.size(), 4u);
  const Tokenizer::Bounded b = tok.encode_at_most(text, true, true, full.size());
  EXPECT_FALSE(b.stopped);
  EXPECT_EQ(b.tokens, full);
}

TEST(BoundedEncode, AVocabWhoseMergesCrossWordsStopsOnlyBetweenFragments) {
  // A SentencePiece token with '▁' inside ("a▁a") lets merges cross words: the words are not encoded apart, and a
  // bounded encoding may stop only where a special token splits the text (or from the length of what is left).
  testing::SyntheticVocab v = testing::spm_vocab();
  v.add("a\xE2\x96\x81" "a", GgufTokenType::kNormal, -0.1f);
  auto tok = testing::load_synthetic(testing::spm_writer(v));
  ASSERT_TRUE(tok.ok()) << tok.error().message;
  std::string text;
  for (int i = 0; i < 50; ++i) text += "a a b<tool>";
  check_every_limit(**tok, text, true, false);
  check_every_limit(**tok, "a a a a a a", true, false);
}

TEST(BoundedEncode, AVocabThatDropsBytesIsNotJudgedByItsLength) {
  // A byte-level BPE vocab without the token of byte 0xFF drops that byte (as llama.cpp does): 100k of them are no
  // tokens at all, so the length of the text is no lower bound of its tokens.
  std::vector<std::string> tokens;
  for (int b = 0; b < 256; ++b) tokens.push_back(byte_level_char(static_cast<uint8_t>(b)));
  tokens[0xFF] = "<unused>";
  tokens.push_back("<|endoftext|>");
  gguf::Writer w;
  w.set("general.architecture", gguf::Value::string("gpt2"));
  w.set("tokenizer.ggml.model", gguf::Value::string("gpt2"));
  w.set("tokenizer.ggml.pre", gguf::Value::string("gpt-2"));
  w.set("tokenizer.ggml.tokens", gguf::Value::string_array(tokens));
  w.set("tokenizer.ggml.token_type", gguf::Value::i32_array(std::vector<int32_t>(tokens.size(), 1)));
  w.set("tokenizer.ggml.merges", gguf::Value::string_array({"a b"}));
  auto tok = testing::load_synthetic(w);
  ASSERT_TRUE(tok.ok()) << tok.error().message;
  const std::string text = std::string(100000, '\xFF') + "ab";
  const std::vector<int32_t> full = (*tok)->encode(text, false, false);
  ASSERT_EQ(full.size(), 2u);
  const Tokenizer::Bounded b = (*tok)->encode_at_most(text, false, false, 2);
  EXPECT_FALSE(b.stopped);
  EXPECT_EQ(b.tokens, full);
}

}  // namespace
}  // namespace kairo::tokenizer
