// Every text of llama.cpp's tokenizer test vectors must tokenize to exactly the ids Hugging Face's tokenizers give
// (the .out files), without BOS and without parsing special tokens -- as llama.cpp's test-tokenizer-0 does.
#include <gtest/gtest.h>

#include "tokenizer_test_util.h"

namespace kairo::tokenizer {
namespace {

using testing::read_vocab_cases;
using testing::shared_tokenizer;

class VocabVectors : public ::testing::TestWithParam<const char*> {};

TEST_P(VocabVectors, EveryTextTokenizesToTheReferenceIds) {
  const std::string rel = std::string("vocab/ggml-vocab-") + GetParam() + ".gguf";
  const Tokenizer& tok = shared_tokenizer(rel);
  const auto cases = read_vocab_cases(rel);
  ASSERT_GE(cases.size(), 40u);
  for (const auto& c : cases) {
    EXPECT_EQ(tok.encode(c.text, /*add_bos=*/false, /*parse_special=*/false), c.ids) << "text: '" << c.text << "'";
  }
}

TEST_P(VocabVectors, DecodingTheReferenceIdsGivesBackTheText) {
  const std::string rel = std::string("vocab/ggml-vocab-") + GetParam() + ".gguf";
  const Tokenizer& tok = shared_tokenizer(rel);
  for (const auto& c : read_vocab_cases(rel)) {
    std::string expected = c.text;
    std::string got = tok.decode(c.ids);
    // SentencePiece adds one space in front of the text; decode keeps it (it is a piece of the first token).
    if (tok.add_space_prefix() && !c.text.empty()) expected = " " + expected;
    EXPECT_EQ(got, expected);
  }
}

INSTANTIATE_TEST_SUITE_P(AllVocabs, VocabVectors,
                         ::testing::Values("llama-spm", "phi-3", "gpt-2", "deepseek-llm", "falcon", "starcoder",
                                           "refact"),
                         [](const auto& info) {
                           std::string s = info.param;
                           for (char& c : s) if (c == '-') c = '_';
                           return s;
                         });

}  // namespace
}  // namespace kairo::tokenizer
