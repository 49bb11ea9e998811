#include "tokenizer/pre_tokenizer.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "core/format.h"
#include "tokenizer/utf8.h"

namespace kairo::tokenizer {
namespace {

pcre2_code* as_code(void* p) { return static_cast<pcre2_code*>(p); }

// Per-thread match state: encode() is const and may run on many threads at once. The JIT stack is larger than
// PCRE2's 32 KiB default so long runs of one character class (100k spaces) do not fail; if a match still fails
// (stack or match limit), the rest of that piece stays one word, which BPE still tokenizes correctly.
struct MatchScratch {
  pcre2_match_data* data = nullptr;
  pcre2_match_context* context = nullptr;
  pcre2_jit_stack* jit_stack = nullptr;
  MatchScratch() {
    data = pcre2_match_data_create(1, nullptr);
    context = pcre2_match_context_create(nullptr);
    jit_stack = pcre2_jit_stack_create(64 * 1024, 8 * 1024 * 1024, nullptr);
    if (context && jit_stack) pcre2_jit_stack_assign(context, nullptr, jit_stack);
  }
  ~MatchScratch() {
    pcre2_jit_stack_free(jit_stack);
    pcre2_match_context_free(context);
    pcre2_match_data_free(data);
  }
};

MatchScratch& scratch() {
  thread_local MatchScratch s;
  return s;
}

}  // namespace

PreTokenizer::~PreTokenizer() {
  for (void* c : codes_) pcre2_code_free(as_code(c));
}

std::string PreTokenizer::known_names() {
  std::string s;
  for (const PreTokenizerConfig& c : pre_tokenizer_configs()) {
    if (!s.empty()) s += ", ";
    s += c.name;
  }
  return s;
}

Result<std::unique_ptr<PreTokenizer>> PreTokenizer::create(std::string_view name) {
  const PreTokenizerConfig* config = nullptr;
  for (const PreTokenizerConfig& c : pre_tokenizer_configs()) {
    if (name == c.name) config = &c;
  }
  if (!config) {
    return Error{strprintf("unknown BPE pre-tokenizer %s (tokenizer.ggml.pre); known: %s",
                           quote_for_error(std::string(name)).c_str(), known_names().c_str())};
  }
  std::unique_ptr<PreTokenizer> pre(new PreTokenizer());
  pre->config_ = *config;
  for (const char* pattern : *config->regexes) {
    int err = 0;
    PCRE2_SIZE err_offset = 0;
    pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern), PCRE2_ZERO_TERMINATED,
                                     PCRE2_UTF | PCRE2_UCP | PCRE2_MATCH_INVALID_UTF | PCRE2_DOLLAR_ENDONLY, &err,
                                     &err_offset, nullptr);
    if (!code) {
      PCRE2_UCHAR msg[256];
      pcre2_get_error_message(err, msg, sizeof(msg));
      return Error{strprintf("pre-tokenizer '%s': regex does not compile at offset %zu: %s", config->name,
                             static_cast<size_t>(err_offset), reinterpret_cast<const char*>(msg))};
    }
    pre->codes_.push_back(code);
    // Without JIT (unsupported CPU) PCRE2 falls back to its interpreter: slower, same results.
    pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);
  }
  return pre;
}

std::vector<std::pair<size_t, size_t>> PreTokenizer::split(std::string_view text) const {
  std::vector<std::pair<size_t, size_t>> words;
  for_each_word(text, [&](size_t begin, size_t end) {
    words.emplace_back(begin, end);
    return true;
  });
  return words;
}

bool PreTokenizer::for_each_word(std::string_view text, const std::function<bool(size_t, size_t)>& word) const {
  if (text.empty()) return true;
  return split_from(0, text, 0, text.size(), word);
}

// Each regex splits every piece of the previous one independently (the subject is the piece alone), so splitting
// depth first yields the words in the same order as splitting the whole text by each regex in turn.
bool PreTokenizer::split_from(size_t level, std::string_view text, size_t begin, size_t end,
                              const std::function<bool(size_t, size_t)>& word) const {
  if (level == codes_.size()) return word(begin, end);
  pcre2_code* code = as_code(codes_[level]);
  MatchScratch& s = scratch();
  const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data() + begin);
  const size_t len = end - begin;
  size_t pos = 0;
  size_t last = 0;  // end of what has been emitted
  while (pos < len) {
    const int rc = pcre2_match(code, subject, len, pos, 0, s.data, s.context);
    if (rc < 0) break;  // no match, or a resource limit: the rest is one gap
    // Copied out before the next level runs: it matches with the same (per-thread) match data.
    const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(s.data);
    const size_t ms = ov[0];
    const size_t me = ov[1];
    if (me <= ms) {  // empty match: step over one character so the scan always advances
      pos = ms + std::min(utf8_len_from_lead(static_cast<uint8_t>(text[begin + ms])), len - ms);
      continue;
    }
    if (ms > last && !split_from(level + 1, text, begin + last, begin + ms, word)) return false;
    if (!split_from(level + 1, text, begin + ms, begin + me, word)) return false;
    last = pos = me;
  }
  if (last < len) return split_from(level + 1, text, begin + last, end, word);
  return true;
}

}  // namespace kairo::tokenizer
