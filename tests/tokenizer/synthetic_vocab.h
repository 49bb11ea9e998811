#pragma once
// Small GGUF tokenizers built in memory, for behaviour the real vocabularies cannot show (special-token rules,
// broken metadata).
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "gguf/gguf_file.h"
#include "gguf/writer.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/vocab.h"

namespace kairo::tokenizer::testing {

struct SyntheticVocab {
  std::vector<std::string> tokens;
  std::vector<float> scores;
  std::vector<int32_t> types;
  int32_t add(std::string text, GgufTokenType type, float score = 0.0f) {
    tokens.push_back(std::move(text));
    types.push_back(static_cast<int32_t>(type));
    scores.push_back(score);
    return static_cast<int32_t>(tokens.size() - 1);
  }
};

// <unk>=0 <s>=1 </s>=2, byte tokens 3..258, then a few SentencePiece pieces and special tokens (ids below).
struct SpmIds {
  static constexpr int32_t kSpace = 259, kA = 260, kB = 261, kSpaceA = 262, kAB = 263, kImStart = 264,
                           kImEnd = 265, kUserIm = 266, kTool = 267;
};
inline SyntheticVocab spm_vocab() {
  SyntheticVocab v;
  v.add("<unk>", GgufTokenType::kUnknown);
  v.add("<s>", GgufTokenType::kControl);
  v.add("</s>", GgufTokenType::kControl);
  for (int b = 0; b < 256; ++b) {
    char hex[8];
    std::snprintf(hex, sizeof(hex), "<0x%02X>", b);
    v.add(hex, GgufTokenType::kByte);
  }
  v.add("\xE2\x96\x81", GgufTokenType::kNormal, -1.0f);
  v.add("a", GgufTokenType::kNormal, -2.0f);
  v.add("b", GgufTokenType::kNormal, -3.0f);
  v.add("\xE2\x96\x81" "a", GgufTokenType::kNormal, -0.5f);
  v.add("ab", GgufTokenType::kNormal, -1.5f);
  v.add("<|im_start|>", GgufTokenType::kControl);
  v.add("<|im_end|>", GgufTokenType::kControl);
  v.add("<|im", GgufTokenType::kUserDefined);
  v.add("<tool>", GgufTokenType::kUserDefined);
  return v;
}

inline gguf::Writer spm_writer(const SyntheticVocab& v) {
  gguf::Writer w;
  w.set("general.architecture", gguf::Value::string("llama"));
  w.set("tokenizer.ggml.model", gguf::Value::string("llama"));
  w.set("tokenizer.ggml.tokens", gguf::Value::string_array(v.tokens));
  w.set("tokenizer.ggml.scores", gguf::Value::f32_array(v.scores));
  w.set("tokenizer.ggml.token_type", gguf::Value::i32_array(v.types));
  w.set("tokenizer.ggml.bos_token_id", gguf::Value::u32(1));
  w.set("tokenizer.ggml.eos_token_id", gguf::Value::u32(2));
  w.set("tokenizer.ggml.unknown_token_id", gguf::Value::u32(0));
  return w;
}

// A byte-level BPE vocab: the 256 byte characters (ids 0..255 in byte order), then merges "a b" -> "ab",
// "ab c" -> "abc" (not a token: must fall back to bytes), "Ġ a" -> "Ġa", and <|endoftext|> as control.
inline gguf::Writer bpe_writer(const std::string& pre) {
  SyntheticVocab v;
  for (int b = 0; b < 256; ++b) v.add("", GgufTokenType::kNormal);  // texts filled below
  int extra = 256;
  for (int b = 0; b < 256; ++b) {
    const bool printable = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
    const uint32_t cpt = printable ? b : extra++;
    std::string s;
    if (cpt < 0x80) {
      s.push_back(static_cast<char>(cpt));
    } else {
      s.push_back(static_cast<char>(0xC0 | (cpt >> 6)));
      s.push_back(static_cast<char>(0x80 | (cpt & 0x3F)));
    }
    v.tokens[b] = s;
  }
  v.add("ab", GgufTokenType::kNormal);                  // 256
  v.add("\xC4\xA0" "a", GgufTokenType::kNormal);        // 257 "Ġa"
  v.add("<|endoftext|>", GgufTokenType::kControl);      // 258
  gguf::Writer w;
  w.set("general.architecture", gguf::Value::string("gpt2"));
  w.set("tokenizer.ggml.model", gguf::Value::string("gpt2"));
  if (!pre.empty()) w.set("tokenizer.ggml.pre", gguf::Value::string(pre));
  w.set("tokenizer.ggml.tokens", gguf::Value::string_array(v.tokens));
  w.set("tokenizer.ggml.token_type", gguf::Value::i32_array(v.types));
  w.set("tokenizer.ggml.merges", gguf::Value::string_array({"a b", "ab c", "\xC4\xA0 a"}));
  w.set("tokenizer.ggml.bos_token_id", gguf::Value::u32(258));
  w.set("tokenizer.ggml.eos_token_id", gguf::Value::u32(258));
  return w;
}

inline Result<std::unique_ptr<Tokenizer>> load_synthetic(const gguf::Writer& w) {
  const std::vector<uint8_t> bytes = w.to_bytes();
  auto file = gguf::File::parse(bytes.data(), bytes.size(), "synthetic.gguf");
  if (!file.ok()) return file.error();
  return Tokenizer::from_gguf(*file);  // copies all it needs: the buffer may go
}

}  // namespace kairo::tokenizer::testing
