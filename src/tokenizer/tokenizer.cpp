#include "tokenizer/tokenizer.h"

#include <algorithm>

#include "core/format.h"
#include "core/out_of_memory.h"
#include "gguf/gguf_file.h"
#include "tokenizer/tokenizer_model.h"

namespace kairo::tokenizer {

Tokenizer::Tokenizer() = default;
Tokenizer::~Tokenizer() = default;

// A vocabulary of a few hundred thousand tokens and their merges is a load-time allocation like the weights: one that
// fails is an Error, not an exception out of a Result-returning load.
Result<std::unique_ptr<Tokenizer>> Tokenizer::from_gguf(const gguf::File& file) {
  try {
    return build(file);
  } catch (const std::bad_alloc& e) {
    return Error{strprintf("%s: out of memory while building the tokenizer: %s%s; free memory (kairo plan --model "
                           "FILE predicts what the model needs)",
                           file.path().c_str(), describe_allocation_failure(e).c_str(),
                           address_space_limit_note().c_str())};
  }
}

Result<std::unique_ptr<Tokenizer>> Tokenizer::build(const gguf::File& file) {
  std::unique_ptr<Tokenizer> tok(new Tokenizer());
  Vocab& v = tok->vocab_;
  v.source = file.path();
  KAIRO_TRY_ASSIGN(v.model, file.get_string_or("tokenizer.ggml.model", ""));
  if (v.model.empty()) {
    return Error{strprintf("%s: the file has no tokenizer (metadata key 'tokenizer.ggml.model' is missing)",
                           file.path().c_str())};
  }
  const ModelEntry* entry = find_model_entry(v.model);
  if (!entry) {
    return Error{strprintf("%s: tokenizer model %s (tokenizer.ggml.model) is not supported; supported: %s",
                           file.path().c_str(), quote_for_error(v.model).c_str(), known_model_names().c_str())};
  }
  KAIRO_TRY_ASSIGN(v.pre, file.get_string_or("tokenizer.ggml.pre", ""));
  KAIRO_TRY_STATUS(load_token_table(file, v));
  KAIRO_TRY_ASSIGN(tok->model_, entry->create(file, v));
  KAIRO_TRY_STATUS(load_special_ids(file, v));
  KAIRO_TRY_ASSIGN(const std::string model_name, file.get_string_or("general.name", ""));
  derive_special_tokens(v, model_name);
  KAIRO_TRY_STATUS(tok->model_->prepare(v));
  tok->special_.build(v);

  tok->pieces_.resize(v.tokens.size());
  for (int32_t id = 0; id < v.n_tokens(); ++id) {
    const TokenData& t = v.tokens[id];
    // Same precedence as llama.cpp's token_to_piece.
    if (t.attr & (kAttrControl | kAttrUnknown)) continue;  // rendered only on request
    if (t.attr & kAttrUserDefined) {
      tok->pieces_[id] = t.text;
    } else if (t.attr & kAttrNormal) {
      tok->pieces_[id] = tok->model_->normal_piece(v, id);
    } else if (t.attr & kAttrByte) {
      tok->pieces_[id] = std::string(1, static_cast<char>(t.byte_value));
    }
  }
  tok->is_eog_.assign(v.tokens.size(), 0);
  for (int32_t id : v.eog_ids) tok->is_eog_[id] = 1;
  if (tok->model_->keeps_every_byte()) {
    tok->max_token_bytes_ = 1;
    for (const TokenData& t : v.tokens) tok->max_token_bytes_ = std::max(tok->max_token_bytes_, t.text.size());
  }
  for (const TokenData& t : v.tokens) {
    if (t.attr & (kAttrLstrip | kAttrRstrip)) tok->has_strip_tokens_ = true;
  }
  return tok;
}

std::vector<int32_t> Tokenizer::encode(std::string_view text, bool add_bos, bool parse_special) const {
  std::vector<int32_t> out;
  out.reserve(text.size() / 3 + 2);
  size_t n_bytes_read = 0;
  encode_into(text, add_bos, parse_special, nullptr, out, n_bytes_read);
  return out;
}

Tokenizer::Bounded Tokenizer::encode_at_most(std::string_view text, bool add_bos, bool parse_special,
                                             size_t max_tokens) const {
  Bounded r;
  r.tokens.reserve(std::min(text.size() / 3, max_tokens) + 2);
  EncodeBudget budget(max_tokens, max_token_bytes_);
  encode_into(text, add_bos, parse_special, &budget, r.tokens, r.n_bytes_read);
  r.stopped = budget.stopped();
  return r;
}

// Fragments are encoded independently (a special token ends every merge), so the tokens before a fragment are final
// and a bounded encoding may stop there too, or inside one where the model finds a word boundary.
void Tokenizer::encode_into(std::string_view text, bool add_bos, bool parse_special, EncodeBudget* budget,
                            std::vector<int32_t>& out, size_t& n_bytes_read) const {
  if (add_bos && vocab_.special.bos != kNoToken) out.push_back(vocab_.special.bos);
  // Finding the special tokens is a pass over the whole text: a text too long for the limit even if all its tokens
  // were as long as the longest is refused before it.
  if (budget && !has_strip_tokens_ && budget->stop_before(out.size(), text.size())) return;
  const std::vector<Fragment> fragments = special_.partition(vocab_, text, parse_special);
  size_t bytes_after = 0;
  for (const Fragment& f : fragments) bytes_after += f.length;
  bool after_special = true;
  for (const Fragment& f : fragments) {
    bytes_after -= f.length;
    if (budget) {
      budget->bytes_after = bytes_after;
      if (budget->stop_before(out.size(), f.length)) {
        n_bytes_read = f.offset;
        return;
      }
    }
    if (f.token != kNoToken) {
      out.push_back(f.token);
      after_special = true;
    } else {
      model_->encode(vocab_, text.substr(f.offset, f.length), after_special, out, budget);
      after_special = false;
      if (budget && budget->stopped()) {
        n_bytes_read = f.offset + f.length - budget->bytes_left_at_stop();
        return;
      }
    }
  }
  n_bytes_read = text.size();
}

std::string Tokenizer::token_to_piece(int32_t id, bool render_special) const {
  if (!vocab_.valid(id)) return {};
  if (render_special && vocab_.has_attr(id, kAttrControl | kAttrUnknown)) return vocab_.tokens[id].text;
  return pieces_[id];
}

std::string Tokenizer::decode(std::span<const int32_t> ids, bool render_special) const {
  std::string out;
  for (int32_t id : ids) out += token_to_piece(id, render_special);
  return out;
}

namespace {

// llama.cpp's three clean-up passes (Hugging Face clean_up_tokenization_spaces). Each pass reads the previous
// pass's text and writes a new one.
std::string clean_spaces(std::string in) {
  if (in.size() < 2) return in;
  std::string out;
  // " ?", " !", " .", " ," -> drop the space
  out.push_back(in[0]);
  for (size_t i = 1; i < in.size(); ++i) {
    const char x = in[i];
    if (in[i - 1] == ' ' && (x == '?' || x == '!' || x == '.' || x == ',')) out.pop_back();
    out.push_back(x);
  }
  // " ' " -> "'"
  in.swap(out);
  out.clear();
  if (!in.empty()) out.push_back(in[0]);
  for (size_t i = 1; i < in.size(); ++i) {
    const char x = in[i];
    if (x == '\'' && i + 1 < in.size() && in[i - 1] == ' ' && in[i + 1] == ' ') {
      out.pop_back();
      in[++i] = '\0';  // the space after is skipped; a later " '" check sees it gone
    }
    out.push_back(x);
  }
  // " 's", " 'm", " 're", " 've" -> drop the space
  in.swap(out);
  out.clear();
  if (!in.empty()) out.push_back(in[0]);
  for (size_t i = 1; i < in.size(); ++i) {
    const char x = in[i];
    if (in[i - 1] == ' ' && x == '\'' && i + 1 < in.size()) {
      const char x1 = in[i + 1];
      if (x1 == 's' || x1 == 'm') {
        out.pop_back();
      } else if (i + 2 < in.size()) {
        const char x2 = in[i + 2];
        if ((x1 == 'r' && x2 == 'e') || (x1 == 'v' && x2 == 'e')) out.pop_back();
      }
    }
    out.push_back(x);
  }
  return out;
}

}  // namespace

std::string Tokenizer::detokenize(std::span<const int32_t> ids, const DetokenizeOptions& options) const {
  bool remove_space = vocab_.add_space_prefix;
  if (options.remove_special && vocab_.add_bos && !ids.empty() && ids.front() == vocab_.special.bos) {
    remove_space = false;
    ids = ids.subspan(1);
  }
  if (options.remove_special && vocab_.add_eos && !ids.empty() && ids.back() == vocab_.special.eos) {
    ids = ids.first(ids.size() - 1);
  }
  std::string out;
  for (int32_t id : ids) {
    std::string piece = token_to_piece(id, options.render_special);
    if (remove_space && !piece.empty() && piece[0] == ' ') piece.erase(0, 1);
    remove_space = false;
    out += piece;
  }
  return vocab_.clean_spaces ? clean_spaces(std::move(out)) : out;
}

Status Tokenizer::check_ids(std::span<const int32_t> ids) const {
  for (size_t i = 0; i < ids.size(); ++i) {
    if (!vocab_.valid(ids[i])) {
      return Error{strprintf("token id %d (position %zu) is outside the vocabulary: ids go from 0 to %d", ids[i], i,
                             n_vocab() - 1)};
    }
  }
  return Status::success();
}

bool Tokenizer::is_eog(int32_t id) const { return vocab_.valid(id) && is_eog_[id] != 0; }

}  // namespace kairo::tokenizer
