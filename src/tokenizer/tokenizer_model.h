#pragma once
// A tokenizer model turns a fragment of plain text (special tokens already split out) into token ids, and a normal
// token back into its bytes. Each model (SentencePiece, byte-level BPE, ...) is one .cpp file with a factory listed in
// model_registry.cpp under its `tokenizer.ggml.model` name.
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

class TokenizerModel {
 public:
  virtual ~TokenizerModel() = default;

  // Builds the model's lookup tables once the vocab (special ids, flags) is final.
  virtual Status prepare(const Vocab& vocab) = 0;

  // Appends the tokens of `text`. `after_special` is true at the start of the text and right after a special token
  // (SentencePiece puts its space prefix there).
  virtual void encode(const Vocab& vocab, std::string_view text, bool after_special,
                      std::vector<int32_t>& out) const = 0;

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
