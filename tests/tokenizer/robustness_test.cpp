// Hostile and pathological input: random bytes, invalid UTF-8, long runs of one character and a 1 MB line must
// tokenize without crashing and decode back (SentencePiece adds its one-space prefix). Speed is the benchmark's job.
#include <gtest/gtest.h>

#include <random>

#include "tokenizer_test_util.h"

namespace kairo::tokenizer {
namespace {

using testing::kRealTokenizers;

// decode(encode(text)) must give the text back, for vocabs that can spell every byte (GPT-2, and SentencePiece
// with byte fallback); the others must at least not crash and stay in range.
void check(const Tokenizer& tok, const std::string& text, bool lossless, bool parse_special) {
  const auto ids = tok.encode(text, false, parse_special);
  for (int32_t id : ids) ASSERT_TRUE(id >= 0 && id < tok.n_vocab());
  if (!lossless || parse_special) return;
  const std::string expected = (tok.add_space_prefix() && !text.empty() ? " " : "") + text;
  EXPECT_EQ(tok.decode(ids), expected);
}

bool lossless(const std::string& rel) {
  return rel.find("gpt-2") != std::string::npos || rel.find("llama-spm") != std::string::npos ||
         rel.find("aidreams") != std::string::npos;
}

TEST(Robustness, RandomBytes) {
  std::mt19937 rng(42);
  std::uniform_int_distribution<int> byte(0, 255);
  for (const char* rel : kRealTokenizers) {
    const Tokenizer& tok = testing::shared_tokenizer(rel);
    for (int round = 0; round < 30; ++round) {
      std::string text(static_cast<size_t>(round * 37 % 300), '\0');
      for (char& c : text) c = static_cast<char>(byte(rng));
      check(tok, text, lossless(rel), round % 2 == 1);
    }
  }
}

TEST(Robustness, InvalidUtf8Patterns) {
  const std::string cases[] = {"\xC3", "\xE2\x82", "\xF0\x9F\xA6", "\x80\x80\x80", "\xC0\xAF", "\xED\xA0\x80",
                               "\xF8\x88\x80\x80\x80", "abc\xFF", std::string("a\0b", 3), "\xEF\xBB\xBF" "bom"};
  for (const char* rel : kRealTokenizers) {
    const Tokenizer& tok = testing::shared_tokenizer(rel);
    for (const std::string& c : cases) check(tok, c, lossless(rel), false);
  }
}

TEST(Robustness, HundredThousandRepeatedCharacters) {
  // One vocab per code path (SentencePiece, single-regex BPE, multi-regex BPE, digit-splitting BPE): each run is a
  // single 100 kB word or symbol chain, the worst case for the merge loops.
  const std::string units[] = {"a", " ", "\xF0\x9F\xA6\x99"};
  for (const char* rel : {"vocab/ggml-vocab-llama-spm.gguf", "vocab/ggml-vocab-gpt-2.gguf",
                          "vocab/ggml-vocab-deepseek-llm.gguf", "vocab/ggml-vocab-starcoder.gguf"}) {
    const Tokenizer& tok = testing::shared_tokenizer(rel);
    for (const std::string& unit : units) {
      std::string text;
      while (text.size() < 100000) text += unit;
      check(tok, text, lossless(rel), false);
    }
  }
}

TEST(Robustness, OneMegabyteLine) {
  std::string line;
  const std::string sentence = "The quick brown fox, 1234 times: \xC3\xA9t\xC3\xA9 \xE4\xBD\xA0\xE5\xA5\xBD <|im_end|>! ";
  while (line.size() < (1u << 20)) line += sentence;
  for (const char* rel : {"vocab/ggml-vocab-llama-spm.gguf", "vocab/ggml-vocab-gpt-2.gguf"}) {
    const Tokenizer& tok = testing::shared_tokenizer(rel);
    check(tok, line, true, false);
  }
}

}  // namespace
}  // namespace kairo::tokenizer
