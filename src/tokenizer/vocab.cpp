#include "tokenizer/vocab.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <limits>

#include "core/format.h"
#include "gguf/gguf_file.h"

namespace kairo::tokenizer {
namespace {

uint32_t attr_from_gguf_type(int64_t type) {
  switch (static_cast<GgufTokenType>(type)) {
    case GgufTokenType::kNormal: return kAttrNormal;
    case GgufTokenType::kUnknown: return kAttrUnknown;
    case GgufTokenType::kControl: return kAttrControl;
    case GgufTokenType::kUserDefined: return kAttrUserDefined;
    case GgufTokenType::kUnused: return kAttrUnused;
    case GgufTokenType::kByte: return kAttrByte;
    default: return kAttrUndefined;  // llama.cpp treats unknown codes the same way: never rendered
  }
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// "<0xNN>" -> NN; -1 when the text has any other shape.
int parse_byte_token(const std::string& text) {
  if (text.size() != 6 || text.compare(0, 3, "<0x") != 0 || text[5] != '>') return -1;
  const int hi = hex_digit(text[3]);
  const int lo = hex_digit(text[4]);
  if (hi < 0 || lo < 0) return -1;
  return hi * 16 + lo;
}

// An array-valued key that must have at least n items; nullptr when absent.
Result<const gguf::Value*> find_array(const gguf::File& file, const std::string& key, size_t n_min) {
  const gguf::Value* v = file.find(key);
  if (!v) return static_cast<const gguf::Value*>(nullptr);
  if (v->type() != gguf::ValueType::ARRAY) {
    return Error{strprintf("%s: metadata key '%s' must be an array, found %s", file.path().c_str(), key.c_str(),
                           gguf::value_type_name(v->type()))};
  }
  if (v->items().size() < n_min) {
    return Error{strprintf("%s: metadata key '%s' has %zu items but the vocabulary has %zu tokens",
                           file.path().c_str(), key.c_str(), v->items().size(), n_min)};
  }
  return v;
}

}  // namespace

namespace {

uint64_t hash_text(std::string_view s) {
  uint64_t h = 0x9E3779B97F4A7C15ull ^ (s.size() * 0xFF51AFD7ED558CCDull);
  size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) {
    uint64_t w;
    std::memcpy(&w, s.data() + i, 8);
    h = (h ^ w) * 0xBF58476D1CE4E5B9ull;
    h ^= h >> 31;
  }
  uint64_t w = 0;
  std::memcpy(&w, s.data() + i, s.size() - i);
  h = (h ^ w) * 0x94D049BB133111EBull;
  return h ^ (h >> 29);
}

}  // namespace

int32_t TokenIndex::build(const std::vector<TokenData>& tokens) {
  size_t cap = 16;
  while (cap < tokens.size() * 2) cap *= 2;
  slots_.assign(cap, Slot{0, kNoToken});
  mask_ = cap - 1;
  for (size_t id = 0; id < tokens.size(); ++id) {
    const uint64_t h = hash_text(tokens[id].text);
    const auto tag = static_cast<uint32_t>(h >> 32);
    for (size_t i = h & mask_;; i = (i + 1) & mask_) {
      Slot& slot = slots_[i];
      if (slot.id == kNoToken) {
        slot = Slot{tag, static_cast<int32_t>(id)};
        break;
      }
      if (slot.tag == tag && tokens[slot.id].text == tokens[id].text) return slot.id;
    }
  }
  return kNoToken;
}

int32_t TokenIndex::find(std::string_view text, const std::vector<TokenData>& tokens) const {
  if (slots_.empty()) return kNoToken;
  const uint64_t h = hash_text(text);
  const auto tag = static_cast<uint32_t>(h >> 32);
  for (size_t i = h & mask_;; i = (i + 1) & mask_) {
    const Slot& slot = slots_[i];
    if (slot.id == kNoToken) return kNoToken;
    if (slot.tag == tag && tokens[slot.id].text == text) return slot.id;
  }
}

Status load_token_table(const gguf::File& file, Vocab& vocab) {
  const std::string& path = file.path();
  const gguf::Value* list = file.find("tokenizer.ggml.tokens");
  if (!list) {
    return Error{strprintf("%s: the file has no tokenizer (metadata key 'tokenizer.ggml.tokens' is missing)",
                           path.c_str())};
  }
  if (list->type() != gguf::ValueType::ARRAY || list->elem_type() != gguf::ValueType::STRING) {
    return Error{strprintf("%s: 'tokenizer.ggml.tokens' must be an array of strings", path.c_str())};
  }
  const size_t n = list->items().size();
  if (n == 0) return Error{strprintf("%s: 'tokenizer.ggml.tokens' is empty", path.c_str())};
  if (n >= static_cast<size_t>(std::numeric_limits<int32_t>::max())) {
    return Error{strprintf("%s: 'tokenizer.ggml.tokens' has %zu tokens, more than token ids can hold", path.c_str(), n)};
  }
  KAIRO_TRY_ASSIGN(const gguf::Value* scores, find_array(file, "tokenizer.ggml.scores", n));
  KAIRO_TRY_ASSIGN(const gguf::Value* types, find_array(file, "tokenizer.ggml.token_type", n));

  vocab.tokens.resize(n);
  for (size_t i = 0; i < n; ++i) {
    TokenData& t = vocab.tokens[i];
    t.text = *list->items()[i].as_string();
    if (t.text.empty()) t.text = "[EMPTY_" + std::to_string(i) + "]";  // as llama.cpp: keeps texts unique
    if (scores) {
      const auto s = scores->items()[i].as_float();
      if (!s) return Error{strprintf("%s: 'tokenizer.ggml.scores' item %zu is not a number", path.c_str(), i)};
      t.score = static_cast<float>(*s);
    }
    if (types) {
      const auto ty = types->items()[i].as_int();
      if (!ty) return Error{strprintf("%s: 'tokenizer.ggml.token_type' item %zu is not an integer", path.c_str(), i)};
      t.attr = attr_from_gguf_type(*ty);
    }
    if (t.attr & kAttrByte) {
      const int b = parse_byte_token(t.text);
      if (b < 0) {
        return Error{strprintf("%s: token %zu has type BYTE but its text %s is not of the form <0xNN>; the "
                               "vocabulary is corrupt", path.c_str(), i, quote_for_error(t.text).c_str())};
      }
      t.byte_value = static_cast<uint8_t>(b);
    }
  }
  const int32_t dup = vocab.index.build(vocab.tokens);
  if (dup != kNoToken) {
    const std::string& text = vocab.tokens[dup].text;
    for (int32_t j = dup + 1; j < vocab.n_tokens(); ++j) {
      if (vocab.tokens[j].text == text) {
        return Error{strprintf("%s: duplicate token %s in the vocabulary (ids %d and %d)", path.c_str(),
                               quote_for_error(text).c_str(), dup, j)};
      }
    }
  }
  return Status::success();
}

Status load_special_ids(const gguf::File& file, Vocab& vocab) {
  const std::string& path = file.path();
  const int32_t n = vocab.n_tokens();
  // A default id outside this vocab (e.g. BPE's 11 in a tiny test vocab) is simply absent, as in llama.cpp.
  for (int32_t* id : {&vocab.special.bos, &vocab.special.eos, &vocab.special.eot, &vocab.special.eom,
                      &vocab.special.unk, &vocab.special.sep, &vocab.special.pad, &vocab.special.mask}) {
    if (*id >= n) *id = kNoToken;
  }
  struct Key {
    const char* name;
    int32_t* id;
    bool strict;  // out of range is an error; otherwise ignored
  };
  // pad/sep/mask are never used to encode or decode here, and real files with a padding id == n_vocab exist, so an
  // out-of-range value there is ignored rather than refused.
  const Key keys[] = {
      {"tokenizer.ggml.bos_token_id", &vocab.special.bos, true},
      {"tokenizer.ggml.eos_token_id", &vocab.special.eos, true},
      {"tokenizer.ggml.eot_token_id", &vocab.special.eot, true},
      {"tokenizer.ggml.eom_token_id", &vocab.special.eom, true},
      {"tokenizer.ggml.unknown_token_id", &vocab.special.unk, true},
      {"tokenizer.ggml.seperator_token_id", &vocab.special.sep, false},
      {"tokenizer.ggml.padding_token_id", &vocab.special.pad, false},
      {"tokenizer.ggml.mask_token_id", &vocab.special.mask, false},
  };
  for (const Key& k : keys) {
    const gguf::Value* v = file.find(k.name);
    if (!v) continue;
    const auto id = v->as_int();
    if (!id) {
      return Error{strprintf("%s: metadata key '%s' must be an integer token id, found %s", path.c_str(), k.name,
                             gguf::value_type_name(v->type()))};
    }
    // Converters write -1 (or UINT32_MAX for unsigned keys) for "no such token".
    if (*id == -1 || *id == 0xFFFFFFFFll) {
      *k.id = kNoToken;
      continue;
    }
    if (*id < 0 || *id >= n) {
      if (!k.strict) continue;
      return Error{strprintf("%s: metadata key '%s' = %lld is outside the vocabulary (%d tokens); fix the id or "
                             "remove the key", path.c_str(), k.name, static_cast<long long>(*id), n)};
    }
    *k.id = static_cast<int32_t>(*id);
  }

  KAIRO_TRY_ASSIGN(vocab.add_bos, file.get_bool_or("tokenizer.ggml.add_bos_token", vocab.add_bos));
  KAIRO_TRY_ASSIGN(vocab.add_eos, file.get_bool_or("tokenizer.ggml.add_eos_token", vocab.add_eos));
  KAIRO_TRY_ASSIGN(vocab.add_space_prefix, file.get_bool_or("tokenizer.ggml.add_space_prefix", vocab.add_space_prefix));
  if (vocab.add_bos && vocab.special.bos == kNoToken) {
    return Error{strprintf("%s: tokenizer.ggml.add_bos_token is true but there is no BOS token "
                           "(tokenizer.ggml.bos_token_id is not set)", path.c_str())};
  }
  if (vocab.add_eos && vocab.special.eos == kNoToken) {
    return Error{strprintf("%s: tokenizer.ggml.add_eos_token is true but there is no EOS token "
                           "(tokenizer.ggml.eos_token_id is not set)", path.c_str())};
  }
  return Status::success();
}

namespace {

// The first of `texts` that is in the vocab (list order is the priority), or kNoToken.
int32_t find_first(const Vocab& vocab, std::initializer_list<std::string_view> texts) {
  for (std::string_view t : texts) {
    const int32_t id = vocab.find(t);
    if (id != kNoToken) return id;
  }
  return kNoToken;
}

void mark_control(Vocab& vocab, int32_t id) {
  // A token that ends a turn must never be rendered or merged as text, whatever type the converter gave it.
  if (id != kNoToken) vocab.tokens[id].attr |= kAttrControl;
}

}  // namespace

void derive_special_tokens(Vocab& vocab, const std::string& model_name) {
  // Texts as recognised by llama.cpp (llama-vocab.cpp) so the same files stop at the same tokens.
  if (vocab.special.eot == kNoToken) {
    vocab.special.eot = find_first(vocab, {"<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>",
                                           "<|end_of_text|>", "<EOT>", "_<EOT>", "[EOT]",
                                           "<\xEF\xBD\x9C" "end\xE2\x96\x81of\xE2\x96\x81sentence\xEF\xBD\x9C>",
                                           "<end_of_utterance>"});
    mark_control(vocab, vocab.special.eot);
  }
  if (vocab.special.eom == kNoToken) {
    vocab.special.eom = vocab.find("<|eom_id|>");
    mark_control(vocab, vocab.special.eom);
  }
  const int32_t fim_pad = find_first(vocab, {"<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]"});
  const int32_t fim_rep = find_first(vocab, {"<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>"});
  const int32_t fim_sep = vocab.find("<|file_sep|>");
  for (int32_t id : {fim_pad, fim_rep, fim_sep}) mark_control(vocab, id);

  // Control tokens named "unused" are placeholders.
  for (TokenData& t : vocab.tokens) {
    if ((t.attr & kAttrControl) && t.text.find("unused") != std::string::npos) t.attr |= kAttrUnused;
  }

  std::vector<int32_t> eog;
  for (int32_t id : {fim_pad, fim_rep, fim_sep, vocab.special.eos, vocab.special.eot, vocab.special.eom}) {
    if (id != kNoToken) eog.push_back(id);
  }
  static const std::string_view kEogTexts[] = {
      "<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<|flush|>", "<|calls|>", "<end_of_turn>",
      "<|endoftext|>", "<|eom_id|>", "<EOT>", "_<EOT>", "[EOT]", "[EOS]", "<|end_of_text|>", "<end_of_utterance>",
      "<\xEF\xBD\x9C" "end\xE2\x96\x81of\xE2\x96\x81sentence\xEF\xBD\x9C>"};
  for (std::string_view text : kEogTexts) {
    const int32_t id = vocab.find(text);
    if (id == kNoToken) continue;
    eog.push_back(id);
    mark_control(vocab, id);
  }
  std::sort(eog.begin(), eog.end());
  eog.erase(std::unique(eog.begin(), eog.end()), eog.end());
  // gpt-oss (o200k_harmony): <|end|> ends a message, not the generation, when <|return|> and <|call|> exist.
  const int32_t end_id = vocab.find("<|end|>");
  if (end_id != kNoToken && vocab.find("<|return|>") != kNoToken && vocab.find("<|call|>") != kNoToken) {
    eog.erase(std::remove(eog.begin(), eog.end(), end_id), eog.end());
    vocab.tokens[end_id].attr = kAttrUserDefined;
  }
  vocab.eog_ids = std::move(eog);

  // Phi-3's added tokens strip the whitespace to their right (tokenizer_config "rstrip": true), which llama.cpp
  // recognises by the model name; do the same so prompts with <|user|> etc. tokenize alike.
  std::string lower = model_name;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  if (lower.find("phi-3") != std::string::npos || lower.find("phi3") != std::string::npos) {
    for (TokenData& t : vocab.tokens) {
      if (t.attr & (kAttrControl | kAttrUserDefined | kAttrUnknown)) t.attr |= kAttrRstrip;
    }
    const int32_t eos_text = vocab.find("</s>");
    if (eos_text != kNoToken) vocab.tokens[eos_text].attr |= kAttrRstrip;
    for (std::string_view text : {"<unk>", "<s>", "<|endoftext|>"}) {
      const int32_t id = vocab.find(text);
      if (id != kNoToken) vocab.tokens[id].attr &= ~kAttrRstrip;
    }
  }
}

}  // namespace kairo::tokenizer
