#pragma once
// A tokenizer model turns a fragment of plain text (special tokens already split out) into token ids, and a normal
// token back into its bytes. Each model (SentencePiece, byte-level BPE, ...) is one .cpp file with a factory listed in
// model_registry.cpp under its `tokenizer.ggml.model` name.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "tokenizer/vocab.h"

namespace kairo::gguf {
class File;
}

namespace kairo::tokenizer {

// The limit of a bounded encoding (Tokenizer::encode_at_most). A model asks it before each word whether to go on.
// "Word" means a piece of text whose tokens do not depend on the text around it (BPE: a pre-tokenizer word, whose
// merges never cross its ends; SentencePiece: a span no vocab token crosses), so the tokens emitted before it are
// already final: the same ids, and as many, as the unbounded encoding emits for that part of the text. Their count
// is therefore a lower bound of the whole text's, and so is that count plus what the rest must at least take.
class EncodeBudget {
 public:
  // max_token_bytes: the most input bytes one token stands for, or 0 when a model may drop bytes (then the rest of
  // the text gives no lower bound).
  EncodeBudget(size_t max_tokens, size_t max_token_bytes)
      : max_tokens_(max_tokens), max_token_bytes_(max_token_bytes) {}

  // Before a word: n_out tokens emitted so far (the whole output), bytes_left bytes of the current fragment not yet
  // encoded. Every byte left is in some token and no token covers more than max_token_bytes of them, so at least
  // ceil(left / max_token_bytes) tokens are still to come; true (stop) when even that passes max_tokens. With
  // nothing left there is nothing to save: no stop, and the caller sees the complete count.
  bool stop_before(size_t n_out, size_t bytes_left) {
    const size_t left = bytes_left + bytes_after;
    if (left == 0) return false;
    const size_t at_least = max_token_bytes_ == 0 ? 0 : (left + max_token_bytes_ - 1) / max_token_bytes_;
    if (n_out + at_least <= max_tokens_) return false;
    stopped_ = true;
    bytes_left_at_stop_ = bytes_left;
    return true;
  }
  bool stopped() const { return stopped_; }
  size_t bytes_left_at_stop() const { return bytes_left_at_stop_; }  // of the fragment it stopped in

  // Bytes of the fragments after the one being encoded (set by the Tokenizer; whitespace that LSTRIP/RSTRIP tokens
  // swallow is in no fragment and not counted: it becomes no token).
  size_t bytes_after = 0;

 private:
  size_t max_tokens_;
  size_t max_token_bytes_;
  bool stopped_ = false;
  size_t bytes_left_at_stop_ = 0;
};

class TokenizerModel {
 public:
  virtual ~TokenizerModel() = default;

  // Builds the model's lookup tables once the vocab (special ids, flags) is final.
  virtual Status prepare(const Vocab& vocab) = 0;

  // Appends the tokens of `text`. `after_special` is true at the start of the text and right after a special token
  // (SentencePiece puts its space prefix there). With a budget, stops before a word when budget->stop_before says so
  // (everything appended until then is final); with nullptr, encodes all of `text`.
  virtual void encode(const Vocab& vocab, std::string_view text, bool after_special, std::vector<int32_t>& out,
                      EncodeBudget* budget) const = 0;

  // Whether every byte of the text ends up in some token (none is dropped). Then no token covers more bytes than
  // the longest token text, which bounds from below how many tokens a text of n bytes takes.
  virtual bool keeps_every_byte() const = 0;

  // The bytes a NORMAL token stands for.
  virtual std::string normal_piece(const Vocab& vocab, int32_t id) const = 0;
};

// How a `tokenizer.ggml.model` name is loaded. `create` reads the model's own metadata (merges, pre-tokenizer) and
// sets the vocab defaults that metadata keys may then override (special ids, add_bos, add_space_prefix, ...).
struct ModelEntry {
  const char* name;
  Result<std::unique_ptr<TokenizerModel>> (*create)(const gguf::File& file, Vocab& vocab);
};

// nullptr when no model of that name exists.
const ModelEntry* find_model_entry(std::string_view name);
std::string known_model_names();  // "llama, gpt2" for error messages

// Factories, one per model file.
Result<std::unique_ptr<TokenizerModel>> create_spm_model(const gguf::File& file, Vocab& vocab);
Result<std::unique_ptr<TokenizerModel>> create_bpe_model(const gguf::File& file, Vocab& vocab);

}  // namespace kairo::tokenizer
