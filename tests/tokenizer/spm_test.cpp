// SentencePiece (tokenizer.ggml.model = "llama") on real vocabularies: the aidreams model's prompts must encode to
// the prompt tokens llama.cpp used for the reference runs, and the reference continuations must decode to their text.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "synthetic_vocab.h"
#include "tokenizer_test_util.h"

namespace kairo::tokenizer {
namespace {

using testing::read_file_bytes;
using testing::shared_path;
using testing::shared_tokenizer;

const Tokenizer& aidreams() { return shared_tokenizer("models/aidreams260K.gguf"); }

class AidreamsReference : public ::testing::TestWithParam<const char*> {};

TEST_P(AidreamsReference, PromptEncodesToTheReferencePromptTokens) {
  const auto ref = nlohmann::json::parse(read_file_bytes(shared_path(std::string("reference/") + GetParam())));
  const Tokenizer& tok = aidreams();
  ASSERT_TRUE(tok.add_bos_by_default());
  const auto ids = tok.encode(ref["prompt"].get<std::string>(), tok.add_bos_by_default(), false);
  EXPECT_EQ(ids, ref["prompt_tokens"].get<std::vector<int32_t>>());
}

TEST_P(AidreamsReference, ContinuationDecodesToTheReferenceText) {
  const auto ref = nlohmann::json::parse(read_file_bytes(shared_path(std::string("reference/") + GetParam())));
  const Tokenizer& tok = aidreams();
  std::vector<int32_t> ids;
  std::string pieces;
  for (const auto& step : ref["steps"]) {
    const int32_t id = step["token"].get<int32_t>();
    ids.push_back(id);
    // piece_hex is llama.cpp's token_to_piece of each generated token.
    std::string hex;
    for (unsigned char c : tok.token_to_piece(id)) hex += "0123456789abcdef"[c >> 4], hex += "0123456789abcdef"[c & 15];
    EXPECT_EQ(hex, step["piece_hex"].get<std::string>()) << "token " << id;
    pieces += tok.token_to_piece(id);
  }
  EXPECT_EQ(tok.decode(ids), ref["text"].get<std::string>());
  IncrementalDecoder dec(tok);
  std::string streamed;
  for (int32_t id : ids) streamed += dec.push(id);
  streamed += dec.flush();
  EXPECT_EQ(streamed, ref["text"].get<std::string>());
}

INSTANTIATE_TEST_SUITE_P(Prompts, AidreamsReference,
                         ::testing::Values("aidreams260K.i-dream.json", "aidreams260K.the-machine.json"),
                         [](const auto& info) { return std::string(info.param).find("machine") != std::string::npos
                                                           ? std::string("the_machine") : std::string("i_dream"); });

TEST(Spm, SpecialIdsAndFlagsComeFromMetadata) {
  const Tokenizer& tok = aidreams();
  EXPECT_EQ(tok.model_name(), "llama");
  EXPECT_EQ(tok.n_vocab(), 512);
  EXPECT_EQ(tok.bos_id(), 1);
  EXPECT_EQ(tok.eos_id(), 2);
  EXPECT_EQ(tok.unk_id(), 0);
  EXPECT_EQ(tok.pad_id(), kNoToken);  // stored as 0xFFFFFFFF = "none"
  EXPECT_TRUE(tok.add_space_prefix());
  EXPECT_TRUE(tok.is_eog(2));
  EXPECT_FALSE(tok.is_eog(1));
  EXPECT_EQ(tok.eog_ids(), std::vector<int32_t>{2});
}

TEST(Spm, EmptyTextIsJustBos) {
  const Tokenizer& tok = aidreams();
  EXPECT_EQ(tok.encode("", true, false), std::vector<int32_t>{1});
  EXPECT_TRUE(tok.encode("", false, false).empty());
}

TEST(Spm, PiecesOfSpecialByteAndNormalTokens) {
  const Tokenizer& tok = aidreams();
  EXPECT_EQ(tok.token_to_piece(1), "");                  // <s> is control
  EXPECT_EQ(tok.token_to_piece(1, true), "<s>");
  EXPECT_EQ(tok.token_to_piece(0), "");                  // <unk>
  EXPECT_EQ(tok.token_to_piece(3 + 0x41), "A");          // <0x41>
  EXPECT_EQ(tok.token_to_piece(3 + 0xE2), "\xE2");       // a lone byte, not UTF-8 on its own
  EXPECT_EQ(tok.token_text(262), "\xE2\x96\x81" "a");    // '▁a'
  EXPECT_EQ(tok.token_to_piece(262), " a");
  EXPECT_EQ(tok.token_to_piece(-1), "");
  EXPECT_EQ(tok.token_to_piece(512), "");
}

TEST(Spm, CharactersOutsideTheVocabFallBackToBytes) {
  const Tokenizer& tok = aidreams();
  // U+00E9 'é' = C3 A9: not in this 512-token vocab, so <0xC3> <0xA9> after the space-prefix token.
  const auto ids = tok.encode("\xC3\xA9", false, false);
  ASSERT_GE(ids.size(), 2u);
  EXPECT_EQ(ids[ids.size() - 2], 3 + 0xC3);
  EXPECT_EQ(ids[ids.size() - 1], 3 + 0xA9);
  EXPECT_EQ(tok.decode(ids), " \xC3\xA9");
}

TEST(Spm, SpecialTokensInTextOnlyWhenParsingSpecials) {
  const Tokenizer& tok = aidreams();
  const auto plain = tok.encode("a</s>b", false, false);
  EXPECT_EQ(std::count(plain.begin(), plain.end(), 2), 0);
  EXPECT_EQ(tok.decode(plain), " a</s>b");
  const auto parsed = tok.encode("a</s>b", false, true);
  // " a" then </s> then "b" with a space prefix again (it follows a special token), as llama.cpp does.
  const std::vector<int32_t> a = tok.encode("a", false, false);
  const std::vector<int32_t> b = tok.encode("b", false, false);
  std::vector<int32_t> expected = a;
  expected.push_back(2);
  expected.insert(expected.end(), b.begin(), b.end());
  EXPECT_EQ(parsed, expected);
}

TEST(Spm, DetokenizeRemovesTheSpacePrefixLikeLlamaCpp) {
  const Tokenizer& tok = aidreams();
  const auto with_bos = tok.encode("I dream", true, false);
  const auto no_bos = tok.encode("I dream", false, false);
  EXPECT_EQ(tok.detokenize(no_bos), "I dream");
  // llama.cpp keeps the space when the first token is BOS (BOS consumes the "first token" slot).
  EXPECT_EQ(tok.detokenize(with_bos), " I dream");
  EXPECT_EQ(tok.detokenize(with_bos, {.remove_special = true}), " I dream");
  EXPECT_EQ(tok.detokenize(with_bos, {.render_special = true}), "<s> I dream");
  EXPECT_EQ(tok.decode(no_bos), " I dream");
}

TEST(Spm, WithoutByteTokensUnknownCharactersBecomeTheUnknownToken) {
  testing::SyntheticVocab v;
  v.add("<unk>", GgufTokenType::kUnknown);
  v.add("<s>", GgufTokenType::kControl);
  v.add("</s>", GgufTokenType::kControl);
  v.add("\xE2\x96\x81", GgufTokenType::kNormal, -1.0f);
  v.add("a", GgufTokenType::kNormal, -2.0f);
  auto tok = testing::load_synthetic(testing::spm_writer(v));
  ASSERT_TRUE(tok.ok()) << tok.error().message;
  // "▁ab": '▁' and 'a' are tokens, 'b' is not and there is no <0x62>: one <unk> per byte, as llama.cpp.
  EXPECT_EQ((*tok)->encode("ab", false, false), (std::vector<int32_t>{3, 4, 0}));
  EXPECT_EQ((*tok)->encode("\xC3\xA9", false, false), (std::vector<int32_t>{3, 0, 0}));
  EXPECT_EQ((*tok)->decode((*tok)->encode("ab", false, false)), " a");
  EXPECT_EQ((*tok)->decode((*tok)->encode("ab", false, false), true), " a<unk>");
}

}  // namespace
}  // namespace kairo::tokenizer
