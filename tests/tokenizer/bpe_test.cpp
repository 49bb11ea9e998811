// Byte-level BPE details the reference vectors do not isolate.
#include <gtest/gtest.h>

#include "synthetic_vocab.h"
#include "tokenizer/pre_tokenizer.h"
#include "tokenizer_test_util.h"

namespace kairo::tokenizer {
namespace {

std::unique_ptr<Tokenizer> synthetic_bpe() {
  auto tok = testing::load_synthetic(testing::bpe_writer("gpt-2"));
  EXPECT_TRUE(tok.ok()) << tok.error().message;
  return std::move(tok).value();
}

TEST(Bpe, MergesByRankAndFallsBackToBytesWhenAMergeIsNoToken) {
  auto tok = synthetic_bpe();
  EXPECT_EQ(tok->encode("ab", false, false), std::vector<int32_t>{256});
  // "ab c" merges to "abc", which is no token: spelled as its bytes.
  EXPECT_EQ(tok->encode("abc", false, false), (std::vector<int32_t>{'a', 'b', 'c'}));
  // " a" is one pre-token; "Ġ a" merges to "Ġa".
  EXPECT_EQ(tok->encode(" a", false, false), std::vector<int32_t>{257});
  EXPECT_EQ(tok->decode(tok->encode(" ab abc", false, false)), " ab abc");
}

TEST(Bpe, PiecesAreRawBytes) {
  auto tok = synthetic_bpe();
  EXPECT_EQ(tok->token_text(257), "\xC4\xA0" "a");
  EXPECT_EQ(tok->token_to_piece(257), " a");
  EXPECT_EQ(tok->token_to_piece(258), "");
  EXPECT_EQ(tok->token_to_piece(258, true), "<|endoftext|>");
}

TEST(Bpe, InvalidUtf8RoundTripsThroughByteTokens) {
  // Truncated sequences, stray continuation bytes, surrogates, code points past U+10FFFF.
  const std::string text = "ok x\xC3 \xE2\x82 done \x80\xBF \xED\xA0\x80 \xF4\x90\x80\x80!";
  for (const char* vocab : {"gpt-2", "deepseek-llm", "falcon", "starcoder", "refact"}) {
    const Tokenizer& tok = testing::shared_tokenizer(std::string("vocab/ggml-vocab-") + vocab + ".gguf");
    EXPECT_EQ(tok.decode(tok.encode(text, false, false)), text) << vocab;
  }
  // Bytes that never occur in UTF-8 (C0, C1, F5..FF): GPT-2 has tokens for all 256 bytes. Falcon and StarCoder lack
  // some and drop them (as llama.cpp does); DeepSeek maps them to added tokens spelled in UTF-8.
  const Tokenizer& gpt2 = testing::shared_tokenizer("vocab/ggml-vocab-gpt-2.gguf");
  EXPECT_EQ(gpt2.decode(gpt2.encode("a\xFF\xFE\xC0", false, false)), "a\xFF\xFE\xC0");
  const Tokenizer& falcon = testing::shared_tokenizer("vocab/ggml-vocab-falcon.gguf");
  EXPECT_EQ(falcon.decode(falcon.encode("a\xFF\xFE" "b", false, false)), "ab");
}

TEST(Bpe, Llama3StyleIgnoreMergesTakesWholeWordTokens) {
  // With ignore_merges a word that is itself a token is emitted whole, even if the merges could not build it.
  auto w = testing::bpe_writer("llama-bpe");
  w.set("tokenizer.ggml.merges", gguf::Value::string_array({"x y"}));
  auto tok = testing::load_synthetic(w);
  ASSERT_TRUE(tok.ok()) << tok.error().message;
  EXPECT_EQ((*tok)->encode("ab", false, false), std::vector<int32_t>{256});
  EXPECT_TRUE((*tok)->add_bos_by_default());  // llama-bpe's default, as in llama.cpp
  auto plain = testing::load_synthetic([] {
    auto w2 = testing::bpe_writer("gpt-2");
    w2.set("tokenizer.ggml.merges", gguf::Value::string_array({"x y"}));
    return w2;
  }());
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ((*plain)->encode("ab", false, false), (std::vector<int32_t>{'a', 'b'}));
}

TEST(PreTokenizer, EveryKnownRegexCompilesAndSplitsLosslessly) {
  const std::string text = "Hello, y'all! 12345 \xE4\xBD\xA0\xE5\xA5\xBD  \n\n\tcaf\xC3\xA9 \xFF\xFE DON'T 3.14";
  for (const PreTokenizerConfig& c : pre_tokenizer_configs()) {
    auto pre = PreTokenizer::create(c.name);
    ASSERT_TRUE(pre.ok()) << pre.error().message;
    const auto words = (*pre)->split(text);
    size_t pos = 0;
    for (const auto& [b, e] : words) {
      EXPECT_EQ(b, pos) << c.name;
      EXPECT_LT(b, e) << c.name;
      pos = e;
    }
    EXPECT_EQ(pos, text.size()) << c.name;
  }
}

TEST(PreTokenizer, Gpt2Words) {
  auto pre = PreTokenizer::create("gpt-2");
  ASSERT_TRUE(pre.ok());
  const std::string text = "Hello world's  end\t!";
  std::vector<std::string> words;
  for (const auto& [b, e] : (*pre)->split(text)) words.push_back(text.substr(b, e - b));
  EXPECT_EQ(words, (std::vector<std::string>{"Hello", " world", "'s", " ", " end", "\t", "!"}));
}

TEST(PreTokenizer, Llama3GroupsDigitsByThree) {
  auto pre = PreTokenizer::create("llama-bpe");
  ASSERT_TRUE(pre.ok());
  const std::string text = "1234567 abc";
  std::vector<std::string> words;
  for (const auto& [b, e] : (*pre)->split(text)) words.push_back(text.substr(b, e - b));
  EXPECT_EQ(words, (std::vector<std::string>{"123", "456", "7", " abc"}));
}

}  // namespace
}  // namespace kairo::tokenizer
