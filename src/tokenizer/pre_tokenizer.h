#pragma once
// Byte-level BPE first splits text into words with the regular expressions of the model's Hugging Face
// pre-tokenizer; `tokenizer.ggml.pre` names which. Each regex splits every piece left by the previous one into its
// matches and the text between them (Hugging Face's Split "isolated" behaviour, llama.cpp's unicode_regex_split).
// PCRE2 (UTF + Unicode properties, JIT) runs the regexes; invalid UTF-8 never matches and is kept between matches,
// so any byte string splits without loss.
#include <cstddef>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/result.h"

namespace kairo::tokenizer {

struct PreTokenizerConfig {
  const char* name;
  const std::vector<const char*>* regexes;
  bool clean_spaces;   // Hugging Face clean_up_tokenization_spaces when detokenizing
  bool ignore_merges;  // a word that is a token as a whole is taken as is (Llama 3, Tekken)
  bool add_bos;        // default for tokenizer.ggml.add_bos_token
};

// Every known pre-tokenizer (pre_tokenizer_regexes.cpp).
std::span<const PreTokenizerConfig> pre_tokenizer_configs();

class PreTokenizer {
 public:
  // Error naming `name` (and the known names) when there is no such pre-tokenizer.
  static Result<std::unique_ptr<PreTokenizer>> create(std::string_view name);
  ~PreTokenizer();
  PreTokenizer(const PreTokenizer&) = delete;
  PreTokenizer& operator=(const PreTokenizer&) = delete;

  // Word boundaries as [begin, end) byte ranges that tile `text` in order.
  std::vector<std::pair<size_t, size_t>> split(std::string_view text) const;
  // The same words, handed to `word(begin, end)` one at a time until it returns false (then this returns false).
  // Lazy: each regex splits one piece of the previous one's output at a time, depth first, so a caller that stops
  // early has not split (or read) the rest of the text.
  bool for_each_word(std::string_view text, const std::function<bool(size_t, size_t)>& word) const;
  const PreTokenizerConfig& config() const { return config_; }

  static std::string known_names();

 private:
  PreTokenizer() = default;
  // Splits text[begin, end) by regex `level` and each resulting piece by the next regexes; the last level's pieces
  // are the words.
  bool split_from(size_t level, std::string_view text, size_t begin, size_t end,
                  const std::function<bool(size_t, size_t)>& word) const;
  PreTokenizerConfig config_{};
  std::vector<void*> codes_;  // pcre2_code_8*, kept opaque so the PCRE2 header stays out of this one
};

}  // namespace kairo::tokenizer
