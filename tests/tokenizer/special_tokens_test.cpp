// Special tokens in text, BOS/EOS/EOT/EOG from metadata, and the whitespace rules of added tokens.
#include <gtest/gtest.h>

#include "synthetic_vocab.h"
#include "tokenizer_test_util.h"

namespace kairo::tokenizer {
namespace {

using testing::SpmIds;

std::unique_ptr<Tokenizer> spm(const std::string& model_name = "") {
  auto w = testing::spm_writer(testing::spm_vocab());
  if (!model_name.empty()) w.set("general.name", gguf::Value::string(model_name));
  auto tok = testing::load_synthetic(w);
  EXPECT_TRUE(tok.ok()) << tok.error().message;
  return std::move(tok).value();
}

TEST(SpecialTokens, ControlTokensOnlyWhenParsingSpecials) {
  auto tok = spm();
  // parse_special: the control token wins over the shorter user-defined "<|im" (longest text first).
  EXPECT_EQ(tok->encode("<|im_start|>", false, true), std::vector<int32_t>{SpmIds::kImStart});
  // Not parsing specials: control tokens are text, but user-defined tokens are still recognised (llama.cpp and
  // Hugging Face both split added non-special tokens out before the model runs).
  const auto plain = tok->encode("<|im_start|>", false, false);
  ASSERT_FALSE(plain.empty());
  EXPECT_EQ(plain[0], SpmIds::kUserIm);
  EXPECT_EQ(std::count(plain.begin(), plain.end(), SpmIds::kImStart), 0);
  // The text after any special token, user-defined ones included, gets the SentencePiece space prefix (llama.cpp).
  EXPECT_EQ(tok->decode(plain), "<|im _start|>");
}

TEST(SpecialTokens, TextAroundSpecialTokensGetsTheSpmSpacePrefix) {
  auto tok = spm();
  using I = SpmIds;
  // "▁a" has the best score, so it merges before "ab"; after a special token the next text fragment is prefixed with a space again.
  EXPECT_EQ(tok->encode("a<|im_end|>a", true, true), (std::vector<int32_t>{1, I::kSpaceA, I::kImEnd, I::kSpaceA}));
  EXPECT_EQ(tok->encode("<tool>ab", false, false), (std::vector<int32_t>{I::kTool, I::kSpaceA, I::kB}));
  EXPECT_EQ(tok->decode(tok->encode("<tool>ab", false, false)), "<tool> ab");
}

TEST(SpecialTokens, OverlappingAndRepeatedOccurrences) {
  auto tok = spm();
  using I = SpmIds;
  EXPECT_EQ(tok->encode("<|im_end|><|im_end|>", false, true), (std::vector<int32_t>{I::kImEnd, I::kImEnd}));
  // "<|im" inside "<|im_start|>" is not split out once the longer token has claimed it.
  EXPECT_EQ(tok->encode("<|im<|im_start|>", false, true), (std::vector<int32_t>{I::kUserIm, I::kImStart}));
}

TEST(SpecialTokens, EndOfGenerationSetFromIdsAndWellKnownTexts) {
  auto tok = spm();
  EXPECT_EQ(tok->bos_id(), 1);
  EXPECT_EQ(tok->eos_id(), 2);
  EXPECT_EQ(tok->eot_id(), SpmIds::kImEnd);  // found by its text
  EXPECT_EQ(tok->eog_ids(), (std::vector<int32_t>{2, SpmIds::kImEnd}));
  EXPECT_TRUE(tok->is_eog(SpmIds::kImEnd));
  EXPECT_FALSE(tok->is_eog(SpmIds::kImStart));
  EXPECT_FALSE(tok->is_eog(-1));
  EXPECT_FALSE(tok->is_eog(100000));
  EXPECT_EQ(tok->token_to_piece(SpmIds::kImEnd), "");
  EXPECT_EQ(tok->token_to_piece(SpmIds::kImEnd, true), "<|im_end|>");
  EXPECT_EQ(tok->token_to_piece(SpmIds::kTool), "<tool>");  // user-defined: always text
}

TEST(SpecialTokens, ExplicitEotIdOverridesTheTextRule) {
  auto w = testing::spm_writer(testing::spm_vocab());
  w.set("tokenizer.ggml.eot_token_id", gguf::Value::u32(SpmIds::kTool));
  auto tok = testing::load_synthetic(w);
  ASSERT_TRUE(tok.ok()) << tok.error().message;
  EXPECT_EQ((*tok)->eot_id(), SpmIds::kTool);
  EXPECT_TRUE((*tok)->is_eog(SpmIds::kTool));
  EXPECT_TRUE((*tok)->is_eog(SpmIds::kImEnd));  // still end-of-generation by its text
}

TEST(SpecialTokens, Phi3TokensSwallowTheWhitespaceAfterThem) {
  using I = SpmIds;
  auto phi = spm("Phi3");
  EXPECT_EQ(phi->encode("<|im_end|> \n a", false, true), (std::vector<int32_t>{I::kImEnd, I::kSpaceA}));
  auto other = spm("other");
  const auto ids = other->encode("<|im_end|> \n a", false, true);
  EXPECT_GT(ids.size(), 2u);
  EXPECT_EQ(other->decode(ids), "  \n a");
}

TEST(SpecialTokens, RealGpt2EndOfText) {
  const Tokenizer& tok = testing::shared_tokenizer("vocab/ggml-vocab-gpt-2.gguf");
  EXPECT_EQ(tok.encode("Hello<|endoftext|> world", false, true), (std::vector<int32_t>{15496, 50256, 995}));
  const auto plain = tok.encode("Hello<|endoftext|> world", false, false);
  EXPECT_EQ(std::count(plain.begin(), plain.end(), 50256), 0);
  EXPECT_EQ(tok.decode(plain), "Hello<|endoftext|> world");
  EXPECT_TRUE(tok.is_eog(50256));
  EXPECT_FALSE(tok.add_bos_by_default());
  EXPECT_EQ(tok.bos_id(), 50256);
}

TEST(SpecialTokens, RealStarcoderFimTokens) {
  const Tokenizer& tok = testing::shared_tokenizer("vocab/ggml-vocab-starcoder.gguf");
  const auto ids = tok.encode("<fim_prefix>def f():<fim_suffix>", false, true);
  ASSERT_GE(ids.size(), 3u);
  EXPECT_EQ(ids.front(), 1);
  EXPECT_EQ(ids.back(), 3);
  EXPECT_TRUE(tok.is_eog(0));  // <|endoftext|>
  EXPECT_TRUE(tok.is_eog(4));  // <fim_pad> ends generation, as in llama.cpp
}

TEST(SpecialTokens, DetokenizeCleansSpacesForBpeModelsThatAskForIt) {
  const Tokenizer& gpt2 = testing::shared_tokenizer("vocab/ggml-vocab-gpt-2.gguf");
  const auto ids = gpt2.encode("Hello , world ! I 'm here", false, false);
  EXPECT_EQ(gpt2.decode(ids), "Hello , world ! I 'm here");
  EXPECT_EQ(gpt2.detokenize(ids), "Hello, world! I'm here");
  const Tokenizer& ds = testing::shared_tokenizer("vocab/ggml-vocab-deepseek-llm.gguf");
  EXPECT_EQ(ds.detokenize(ds.encode("Hello , world", false, false)), "Hello , world");
}

TEST(SpecialTokens, CheckIdsNamesTheBadId) {
  auto tok = spm();
  const std::vector<int32_t> ok = {1, 2, 3};
  EXPECT_TRUE(tok->check_ids(ok).ok());
  const std::vector<int32_t> bad = {1, 268, 2};
  const Status s = tok->check_ids(bad);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message, "token id 268 (position 1) is outside the vocabulary: ids go from 0 to 267");
}

}  // namespace
}  // namespace kairo::tokenizer
