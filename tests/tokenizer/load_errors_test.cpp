// A broken or unsupported tokenizer in a GGUF is a clear load error, never a crash or a silent fallback.
#include <gtest/gtest.h>

#include "synthetic_vocab.h"

namespace kairo::tokenizer {
namespace {

using testing::load_synthetic;

std::string load_error(const gguf::Writer& w) {
  auto tok = load_synthetic(w);
  if (tok.ok()) return "(loaded)";
  return tok.error().message;
}

TEST(LoadErrors, NoTokenizer) {
  gguf::Writer w;
  w.set("general.architecture", gguf::Value::string("llama"));
  EXPECT_EQ(load_error(w),
            "synthetic.gguf: the file has no tokenizer (metadata key 'tokenizer.ggml.model' is missing)");
}

TEST(LoadErrors, UnsupportedModel) {
  auto w = testing::spm_writer(testing::spm_vocab());
  w.set("tokenizer.ggml.model", gguf::Value::string("t5"));
  EXPECT_EQ(load_error(w),
            "synthetic.gguf: tokenizer model \"t5\" (tokenizer.ggml.model) is not supported; supported: llama, gpt2");
}

TEST(LoadErrors, UnknownPreTokenizerIsNamed) {
  const std::string msg = load_error(testing::bpe_writer("no-such-pre"));
  EXPECT_EQ(msg.rfind("synthetic.gguf: unknown BPE pre-tokenizer \"no-such-pre\" (tokenizer.ggml.pre); known: default, "
                      "gpt-2,", 0), 0u) << msg;
}

TEST(LoadErrors, MissingPreTokenizer) {
  EXPECT_EQ(load_error(testing::bpe_writer("")),
            "synthetic.gguf: BPE tokenizer without a pre-tokenizer name (tokenizer.ggml.pre is missing); re-convert "
            "the model with a recent llama.cpp convert_hf_to_gguf.py");
}

TEST(LoadErrors, MalformedByteTokens) {
  for (const char* text : {"<0x-1>", "<0xZZ>", "<0x1>", "<0x100>", "0x41"}) {
    auto v = testing::spm_vocab();
    v.tokens[3 + 0x41] = text;
    EXPECT_EQ(load_error(testing::spm_writer(v)),
              std::string("synthetic.gguf: token 68 has type BYTE but its text \"") + text +
                  "\" is not of the form <0xNN>; the vocabulary is corrupt");
  }
}

TEST(LoadErrors, SpecialIdOutsideTheVocab) {
  auto w = testing::spm_writer(testing::spm_vocab());
  w.set("tokenizer.ggml.bos_token_id", gguf::Value::u32(268));
  EXPECT_EQ(load_error(w), "synthetic.gguf: metadata key 'tokenizer.ggml.bos_token_id' = 268 is outside the "
                           "vocabulary (268 tokens); fix the id or remove the key");
  auto w2 = testing::spm_writer(testing::spm_vocab());
  w2.set("tokenizer.ggml.eot_token_id", gguf::Value::i32(-5));
  EXPECT_EQ(load_error(w2), "synthetic.gguf: metadata key 'tokenizer.ggml.eot_token_id' = -5 is outside the "
                            "vocabulary (268 tokens); fix the id or remove the key");
}

TEST(LoadErrors, UnsetMarkersAndPaddingOutOfRangeAreNotErrors) {
  auto w = testing::spm_writer(testing::spm_vocab());
  w.set("tokenizer.ggml.padding_token_id", gguf::Value::u32(268));     // == n_vocab, seen in real files
  w.set("tokenizer.ggml.seperator_token_id", gguf::Value::u32(0xFFFFFFFFu));
  w.set("tokenizer.ggml.eot_token_id", gguf::Value::i32(-1));
  w.set("tokenizer.ggml.add_bos_token", gguf::Value::boolean(false));
  auto tok = load_synthetic(w);
  ASSERT_TRUE(tok.ok()) << tok.error().message;
  EXPECT_EQ((*tok)->pad_id(), kNoToken);
  EXPECT_FALSE((*tok)->add_bos_by_default());
  // eot -1 means "none", so the text rule finds <|im_end|>.
  EXPECT_EQ((*tok)->eot_id(), testing::SpmIds::kImEnd);
}

TEST(LoadErrors, AddBosWithoutBos) {
  auto w = testing::spm_writer(testing::spm_vocab());
  w.set("tokenizer.ggml.bos_token_id", gguf::Value::u32(0xFFFFFFFFu));
  EXPECT_EQ(load_error(w), "synthetic.gguf: tokenizer.ggml.add_bos_token is true but there is no BOS token "
                           "(tokenizer.ggml.bos_token_id is not set)");
}

TEST(LoadErrors, WrongTypesAndLengths) {
  auto v = testing::spm_vocab();
  auto w = testing::spm_writer(v);
  w.set("tokenizer.ggml.tokens", gguf::Value::string("not an array"));
  EXPECT_EQ(load_error(w), "synthetic.gguf: 'tokenizer.ggml.tokens' must be an array of strings");

  auto w2 = testing::spm_writer(v);
  w2.set("tokenizer.ggml.scores", gguf::Value::f32_array({0.0f, 1.0f}));
  EXPECT_EQ(load_error(w2), "synthetic.gguf: metadata key 'tokenizer.ggml.scores' has 2 items but the vocabulary "
                            "has 268 tokens");

  auto w3 = testing::spm_writer(v);
  w3.set("tokenizer.ggml.bos_token_id", gguf::Value::string("1"));
  EXPECT_EQ(load_error(w3), "synthetic.gguf: metadata key 'tokenizer.ggml.bos_token_id' must be an integer token "
                            "id, found string");

  auto w4 = testing::spm_writer(v);
  w4.set("tokenizer.ggml.tokens", gguf::Value::string_array({}));
  EXPECT_EQ(load_error(w4), "synthetic.gguf: 'tokenizer.ggml.tokens' is empty");
}

TEST(LoadErrors, DuplicateTokenText) {
  auto v = testing::spm_vocab();
  v.tokens[testing::SpmIds::kB] = std::string(1, 'a');  // (not = "a": GCC 12 -Wrestrict false positive)
  EXPECT_EQ(load_error(testing::spm_writer(v)),
            "synthetic.gguf: duplicate token \"a\" in the vocabulary (ids 260 and 261)");
}

TEST(LoadErrors, BpeWithoutMergesOrWithBrokenMerge) {
  auto w = testing::bpe_writer("gpt-2");
  w.set("tokenizer.ggml.merges", gguf::Value::string_array({"a b", "nospace"}));
  EXPECT_EQ(load_error(w), "synthetic.gguf: BPE merge 1 \"nospace\" is not two symbols separated by a space");
}

TEST(LoadErrors, SpmWithoutByteTokensNeedsAnUnknownToken) {
  testing::SyntheticVocab v;
  v.add("<s>", GgufTokenType::kControl);
  v.add("</s>", GgufTokenType::kControl);
  v.add("a", GgufTokenType::kNormal);
  auto w = testing::spm_writer(v);
  w.set("tokenizer.ggml.bos_token_id", gguf::Value::u32(0));
  w.set("tokenizer.ggml.eos_token_id", gguf::Value::u32(1));
  w.set("tokenizer.ggml.unknown_token_id", gguf::Value::u32(0xFFFFFFFFu));
  EXPECT_EQ(load_error(w), "synthetic.gguf: SentencePiece vocabulary has neither <0xNN> byte tokens for every byte "
                           "nor an unknown token, so some text could not be encoded");
}

}  // namespace
}  // namespace kairo::tokenizer
