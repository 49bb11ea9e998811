#pragma once
// Text <-> token ids for a GGUF model, matching llama.cpp token for token. The model type comes from
// `tokenizer.ggml.model` (model_registry.cpp); special tokens, BOS/EOS/EOG and piece rendering are common to all.
//
//   auto tok = Tokenizer::from_gguf(file);                      // Result<std::unique_ptr<Tokenizer>>
//   auto ids = (*tok)->encode("Hello", (*tok)->add_bos_by_default(), /*parse_special=*/false);
//   IncrementalDecoder dec(**tok);  std::string s = dec.push(id);  ... s += dec.flush();
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "tokenizer/special_tokens.h"
#include "tokenizer/vocab.h"

namespace kairo::gguf {
class File;
}

namespace kairo::tokenizer {

class EncodeBudget;
class TokenizerModel;

struct DetokenizeOptions {
  bool remove_special = false;  // drop a leading BOS / trailing EOS when the model adds them
  bool render_special = false;  // control tokens as their text ("<|im_end|>") instead of nothing
};

class Tokenizer {
 public:
  static Result<std::unique_ptr<Tokenizer>> from_gguf(const gguf::File& file);
  ~Tokenizer();
  Tokenizer(const Tokenizer&) = delete;
  Tokenizer& operator=(const Tokenizer&) = delete;

  // Token ids for `text` (any bytes; invalid UTF-8 is encoded losslessly through byte tokens). add_bos prepends
  // BOS when the model has one. parse_special: control tokens written in the text (e.g. "<|im_start|>") become their
  // ids; otherwise they are tokenized as plain text. User-defined tokens are always recognised, as in llama.cpp.
  std::vector<int32_t> encode(std::string_view text, bool add_bos, bool parse_special) const;

  // encode() for a caller that refuses texts of more than max_tokens tokens (a prompt longer than the context):
  // the work is bounded by the limit, not by the length of the text.
  struct Bounded {
    std::vector<int32_t> tokens;  // encode()'s tokens; when stopped, only the first of them
    bool stopped = false;         // the text has more than max_tokens tokens and was not encoded to its end
    size_t n_bytes_read = 0;      // how far into the text encoding got (text.size() unless stopped)
  };
  // Exactly encode()'s tokens whenever there are at most max_tokens of them. Otherwise it may stop as soon as the
  // count is known to pass max_tokens: before a word once the tokens so far plus what the rest must at least take
  // (its bytes over the longest token's) pass it -- without reading the rest. (A text whose count passes the limit
  // only in its last word is encoded in full: then stopped is false and tokens.size() > max_tokens.)
  Bounded encode_at_most(std::string_view text, bool add_bos, bool parse_special, size_t max_tokens) const;

  // The bytes this token contributes to the text: SentencePiece '▁' -> ' ', <0xNN> -> that byte, byte-level BPE
  // decoded; control/unknown tokens -> "" unless render_special. Out-of-range ids -> "". Not necessarily UTF-8.
  std::string token_to_piece(int32_t id, bool render_special = false) const;

  // Concatenated pieces (what a stream of generated tokens shows). Not necessarily valid UTF-8.
  std::string decode(std::span<const int32_t> ids, bool render_special = false) const;

  // llama.cpp's llama_detokenize: as decode, but the SentencePiece space prefix of the first token is removed and,
  // for BPE models that ask for it, tokenization spaces are cleaned (" ," -> ",").
  std::string detokenize(std::span<const int32_t> ids, const DetokenizeOptions& options = {}) const;

  // Error naming the first id outside [0, n_vocab), for user-supplied ids.
  Status check_ids(std::span<const int32_t> ids) const;

  int32_t n_vocab() const { return vocab_.n_tokens(); }
  int32_t bos_id() const { return vocab_.special.bos; }  // kNoToken (-1) when absent
  int32_t eos_id() const { return vocab_.special.eos; }
  int32_t eot_id() const { return vocab_.special.eot; }
  int32_t eom_id() const { return vocab_.special.eom; }
  int32_t unk_id() const { return vocab_.special.unk; }
  int32_t pad_id() const { return vocab_.special.pad; }
  bool is_eog(int32_t id) const;
  const std::vector<int32_t>& eog_ids() const { return vocab_.eog_ids; }
  bool add_bos_by_default() const { return vocab_.add_bos; }
  bool add_eos_by_default() const { return vocab_.add_eos; }
  bool add_space_prefix() const { return vocab_.add_space_prefix; }

  const std::string& token_text(int32_t id) const { return vocab_.tokens.at(id).text; }
  float token_score(int32_t id) const { return vocab_.tokens.at(id).score; }
  uint32_t token_attr(int32_t id) const { return vocab_.tokens.at(id).attr; }  // TokenAttr bits
  bool is_control(int32_t id) const { return vocab_.valid(id) && vocab_.has_attr(id, kAttrControl); }
  int32_t find_token(std::string_view text) const { return vocab_.find(text); }  // exact text, kNoToken if none

  const std::string& model_name() const { return vocab_.model; }  // "llama", "gpt2"
  const std::string& pre_name() const { return vocab_.pre; }      // tokenizer.ggml.pre
  const Vocab& vocab() const { return vocab_; }

 private:
  Tokenizer();
  static Result<std::unique_ptr<Tokenizer>> build(const gguf::File& file);  // from_gguf, which catches std::bad_alloc
  void encode_into(std::string_view text, bool add_bos, bool parse_special, EncodeBudget* budget,
                   std::vector<int32_t>& out, size_t& n_bytes_read) const;

  Vocab vocab_;
  std::unique_ptr<TokenizerModel> model_;
  SpecialMatcher special_;
  std::vector<std::string> pieces_;  // by id, render_special = false
  std::vector<uint8_t> is_eog_;      // by id
  // The most bytes of text one token stands for (the longest token text), or 0 when the model may drop bytes.
  size_t max_token_bytes_ = 0;
  // A user-defined or control token that swallows whitespace next to it: that whitespace becomes no token, so the
  // length of a text says nothing about its tokens until the special tokens are found.
  bool has_strip_tokens_ = false;
};

// Turns a stream of token ids into text that is always complete UTF-8: bytes of a character split over several
// tokens are held back until the character is complete; a sequence that can no longer become valid comes out as
// U+FFFD as soon as that is known (never stalls); flush() ends the stream (a dangling partial character -> U+FFFD).
// Pieces are exactly token_to_piece's, so a generated continuation keeps its leading space as llama.cpp's server
// streams it; set strip_leading_space to drop the SentencePiece space prefix of the first token (as detokenize does).
class IncrementalDecoder {
 public:
  explicit IncrementalDecoder(const Tokenizer& tokenizer, bool render_special = false,
                              bool strip_leading_space = false);
  std::string push(int32_t id);
  std::string flush();
  size_t n_pending_bytes() const { return pending_.size(); }

 private:
  const Tokenizer& tokenizer_;
  bool render_special_;
  bool strip_leading_space_;
  bool first_ = true;
  std::string pending_;
};

}  // namespace kairo::tokenizer
