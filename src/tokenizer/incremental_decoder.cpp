#include "tokenizer/tokenizer.h"
#include "tokenizer/utf8.h"

namespace kairo::tokenizer {

IncrementalDecoder::IncrementalDecoder(const Tokenizer& tokenizer, bool render_special, bool strip_leading_space)
    : tokenizer_(tokenizer), render_special_(render_special), strip_leading_space_(strip_leading_space) {}

std::string IncrementalDecoder::push(int32_t id) {
  std::string piece = tokenizer_.token_to_piece(id, render_special_);
  if (first_ && strip_leading_space_ && tokenizer_.add_space_prefix() && !piece.empty() && piece[0] == ' ') {
    piece.erase(0, 1);
  }
  first_ = false;
  pending_ += piece;

  std::string out;
  size_t i = 0;
  while (i < pending_.size()) {
    const Utf8Step st = utf8_step(std::string_view(pending_).substr(i));
    if (st.kind == Utf8Step::kIncomplete) break;  // may still complete with the next token's bytes
    if (st.kind == Utf8Step::kValid) {
      out.append(pending_, i, st.n_bytes);
    } else {
      out.append(kReplacementChar);
    }
    i += st.n_bytes;
  }
  pending_.erase(0, i);
  return out;
}

std::string IncrementalDecoder::flush() {
  std::string out;
  append_utf8_sanitized(pending_, out);
  pending_.clear();
  return out;
}

}  // namespace kairo::tokenizer
