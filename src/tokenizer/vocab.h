#pragma once
// The token table every tokenizer model shares: token texts, scores, attributes, the text -> id index, special
// token ids and the flags that steer encoding and decoding. Plain data, filled once at load and then read-only.
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace kairo::gguf {
class File;
}

namespace kairo::tokenizer {

inline constexpr int32_t kNoToken = -1;

// Token attributes (a bit set). The GGUF `tokenizer.ggml.token_type` gives one of the first six; LSTRIP/RSTRIP come
// from load-time rules (they make a special token swallow the whitespace beside it, as Hugging Face's added tokens do).
enum TokenAttr : uint32_t {
  kAttrUndefined = 0,
  kAttrNormal = 1u << 0,
  kAttrUnknown = 1u << 1,
  kAttrControl = 1u << 2,
  kAttrUserDefined = 1u << 3,
  kAttrUnused = 1u << 4,
  kAttrByte = 1u << 5,
  kAttrLstrip = 1u << 6,
  kAttrRstrip = 1u << 7,
};

// GGUF token type codes (tokenizer.ggml.token_type), as written by llama.cpp's converters.
enum class GgufTokenType : int32_t { kUndefined = 0, kNormal = 1, kUnknown = 2, kControl = 3, kUserDefined = 4,
                                     kUnused = 5, kByte = 6 };

struct TokenData {
  std::string text;
  float score = 0.0f;
  uint32_t attr = kAttrNormal;
  uint8_t byte_value = 0;  // for kAttrByte tokens: the byte that <0xNN> stands for
};

struct SpecialIds {
  int32_t bos = kNoToken;
  int32_t eos = kNoToken;
  int32_t eot = kNoToken;
  int32_t eom = kNoToken;
  int32_t unk = kNoToken;
  int32_t sep = kNoToken;
  int32_t pad = kNoToken;
  int32_t mask = kNoToken;
};

// Token text -> id. Open addressing keyed by a fast hash, checked against the token's own text: the lookup is the
// inner loop of both merge algorithms, and this costs one or two cache misses where std::unordered_map costs more.
class TokenIndex {
 public:
  // Indexes tokens[0..n); returns the id already holding a text when a text repeats (kNoToken: all unique).
  int32_t build(const std::vector<TokenData>& tokens);
  int32_t find(std::string_view text, const std::vector<TokenData>& tokens) const;

 private:
  struct Slot {
    uint32_t tag;  // high hash bits, to skip most text comparisons
    int32_t id;    // kNoToken (-1): empty
  };
  std::vector<Slot> slots_;
  size_t mask_ = 0;
};

struct Vocab {
  std::string model;  // tokenizer.ggml.model: "llama", "gpt2", ...
  std::string pre;    // tokenizer.ggml.pre ("" when absent)
  std::string source; // the file, for error messages
  std::vector<TokenData> tokens;
  TokenIndex index;

  SpecialIds special;
  std::vector<int32_t> eog_ids;  // sorted, unique: generation stops at any of these

  bool add_bos = false;
  bool add_eos = false;
  bool add_space_prefix = false;  // SPM: a space before the text (and after each special token)
  bool clean_spaces = false;      // detokenize: " ," -> "," etc. (Hugging Face clean_up_tokenization_spaces)

  int32_t n_tokens() const { return static_cast<int32_t>(tokens.size()); }
  bool valid(int32_t id) const { return id >= 0 && id < n_tokens(); }
  int32_t find(std::string_view text) const { return index.find(text, tokens); }
  bool has_attr(int32_t id, uint32_t attr) const { return (tokens[id].attr & attr) != 0; }
};

// Reads tokenizer.ggml.tokens / scores / token_type into `vocab` (texts unique, arrays as long as the token list,
// byte tokens well formed). Errors name the file, the key and the offending token.
Status load_token_table(const gguf::File& file, Vocab& vocab);

// Reads the special token ids (tokenizer.ggml.bos_token_id, ...) over the defaults already in vocab.special and the
// add_bos/add_eos/add_space_prefix flags over the defaults already in vocab; checks ids are inside the vocab.
Status load_special_ids(const gguf::File& file, Vocab& vocab);

// Fills what llama.cpp derives from token texts: EOT/EOM from well-known texts (<|eot_id|>, <|im_end|>, ...), the
// EOG set, and the RSTRIP rule for Phi-3 special tokens. `model_name` is general.name.
void derive_special_tokens(Vocab& vocab, const std::string& model_name);

}  // namespace kairo::tokenizer
