// SentencePiece BPE as llama.cpp runs it (llm_tokenizer_spm): the text is split into UTF-8 characters, then the
// adjacent pair whose concatenation is the vocab token with the highest score is merged, repeatedly (ties: leftmost
// first). What is left and is not a token falls back to <0xNN> byte tokens (or the unknown token).
#include <cstdio>
#include <algorithm>

#include "core/format.h"
#include "gguf/gguf_file.h"
#include "tokenizer/tokenizer_model.h"
#include "tokenizer/utf8.h"

namespace kairo::tokenizer {
namespace {

constexpr std::string_view kSpace = "\xE2\x96\x81";  // U+2581 '▁', SentencePiece's visible space

struct Symbol {
  int prev;
  int next;
  size_t start;  // into the escaped text
  size_t n;      // 0 once merged into its left neighbour
};

struct Bigram {
  int left;
  int right;
  float score;
  size_t size;  // bytes of the merged text; a mismatch later means a side has changed since it was queued
};

struct BigramOrder {
  bool operator()(const Bigram& l, const Bigram& r) const {
    return l.score < r.score || (l.score == r.score && l.left > r.left);
  }
};

// `fragment` as SentencePiece sees it: spaces as '▁', and a '▁' in front when the space prefix applies.
void escape(std::string_view fragment, bool prefix, std::string& out) {
  out.clear();
  out.reserve(fragment.size() + 8);
  if (prefix) out.append(kSpace);
  for (char c : fragment) {
    if (c == ' ') {
      out.append(kSpace);
    } else {
      out.push_back(c);
    }
  }
}

// Whether the escaped text has a '▁' starting at fragment[i] (an escaped space or a literal U+2581), and whether one
// ends right before it (i >= 1). The escaped bytes of a space cannot combine with the neighbouring bytes into
// another '▁' (E2 96 81 starts with E2, which is neither 96 nor 81), so these see exactly the '▁'s of the escaped
// text; the space prefix is only ever before fragment[0], which never starts a word.
bool starts_space(std::string_view fragment, size_t i) {
  return fragment[i] == ' ' || (fragment[i] == kSpace[0] && fragment.compare(i, kSpace.size(), kSpace) == 0);
}
bool ends_space(std::string_view fragment, size_t i) {
  return fragment[i - 1] == ' ' || (fragment[i - 1] == kSpace[2] && i >= kSpace.size() &&
                                    fragment.compare(i - kSpace.size(), kSpace.size(), kSpace) == 0);
}

class SpmModel final : public TokenizerModel {
 public:
  Status prepare(const Vocab& vocab) override {
    bool missing = false;
    for (int b = 0; b < 256; ++b) {
      char hex[8];
      std::snprintf(hex, sizeof(hex), "<0x%02X>", b);
      int32_t id = vocab.find(hex);
      if (id == kNoToken) id = vocab.find(std::string(1, static_cast<char>(b)));
      if (id == kNoToken) id = vocab.special.unk;
      if (id == kNoToken) missing = true;
      byte_to_id_[b] = id;
    }
    words_are_independent_ = true;
    for (const TokenData& t : vocab.tokens) {
      size_t lead = 0;
      while (t.text.compare(lead, kSpace.size(), kSpace) == 0) lead += kSpace.size();
      if (t.text.find(kSpace, lead) != std::string::npos) words_are_independent_ = false;
    }
    if (missing) {
      return Error{strprintf("%s: SentencePiece vocabulary has neither <0xNN> byte tokens for every byte nor an "
                             "unknown token, so some text could not be encoded", vocab.source.c_str())};
    }
    return Status::success();
  }

  void encode(const Vocab& vocab, std::string_view fragment, bool after_special, std::vector<int32_t>& out,
              EncodeBudget* budget) const override {
    const bool prefix = vocab.add_space_prefix && after_special;
    std::vector<Symbol> symbols;
    std::vector<Bigram> heap;
    std::string text;
    if (!words_are_independent_) {
      escape(fragment, prefix, text);
      encode_span(vocab, text, 0, text.size(), symbols, heap, out);
      return;
    }
    // When no token has a '▁' after other characters (true of SentencePiece vocabs trained with whitespace
    // splitting: Llama, Mistral, Phi-3), no merge can cross the start of a word, so each word is merged on its own:
    // same result, but a small heap instead of one the size of the whole text. A word starts at a '▁' of the escaped
    // text that does not follow another '▁'; the words are found in the fragment itself and escaped one at a time,
    // so a bounded encoding that stops early has not escaped (or read) the rest.
    size_t begin = 0;
    for (size_t i = 1;; ++i) {
      const bool last = i >= fragment.size();
      if (!last && !(starts_space(fragment, i) && !ends_space(fragment, i))) continue;
      if (budget && budget->stop_before(out.size(), fragment.size() - begin)) return;
      escape(fragment.substr(begin, (last ? fragment.size() : i) - begin), prefix && begin == 0, text);
      encode_span(vocab, text, 0, text.size(), symbols, heap, out);
      if (last) return;
      begin = i;
    }
  }

  bool keeps_every_byte() const override { return true; }  // prepare() refuses a vocab with a byte it cannot spell

  // Merges the symbols of text[begin, end) and appends their tokens.
  void encode_span(const Vocab& vocab, const std::string& text, size_t begin, size_t end,
                   std::vector<Symbol>& symbols, std::vector<Bigram>& heap, std::vector<int32_t>& out) const {
    symbols.clear();
    for (size_t offs = begin; offs < end;) {
      size_t n = std::min(utf8_len_from_lead(static_cast<uint8_t>(text[offs])), end - offs);
      // Invalid UTF-8 only: a lead byte right before an escaped space must not swallow part of its '▁', or the
      // space would come back as '▁' bytes. (llama.cpp does swallow it; valid text never meets this.)
      for (size_t k = 1; k < n; ++k) {
        if (text.compare(offs + k, kSpace.size(), kSpace) == 0) {
          n = k;
          break;
        }
      }
      const int idx = static_cast<int>(symbols.size());
      symbols.push_back({idx - 1, offs + n == end ? -1 : idx + 1, offs, n});
      offs += n;
    }
    if (symbols.empty()) return;

    heap.clear();
    const BigramOrder order;
    const auto try_add = [&](int left, int right) {
      if (left == -1 || right == -1) return;
      const std::string_view merged(text.data() + symbols[left].start, symbols[left].n + symbols[right].n);
      const int32_t id = vocab.find(merged);
      if (id == kNoToken) return;
      heap.push_back({left, right, vocab.tokens[id].score, merged.size()});
      std::push_heap(heap.begin(), heap.end(), order);
    };
    for (int i = 1; i < static_cast<int>(symbols.size()); ++i) try_add(i - 1, i);

    while (!heap.empty()) {
      std::pop_heap(heap.begin(), heap.end(), order);
      const Bigram bigram = heap.back();
      heap.pop_back();
      Symbol& left = symbols[bigram.left];
      Symbol& right = symbols[bigram.right];
      if (left.n == 0 || right.n == 0 || left.n + right.n != bigram.size) continue;
      left.n += right.n;
      right.n = 0;
      left.next = right.next;
      if (right.next >= 0) symbols[right.next].prev = bigram.left;
      try_add(left.prev, bigram.left);
      try_add(bigram.left, left.next);
    }

    // Every merged symbol is a token by construction; only single characters can miss the vocab, and those are
    // spelled in bytes (llama.cpp's resegment finds no merge to undo for them either).
    for (int i = 0; i != -1; i = symbols[i].next) {
      const Symbol& s = symbols[i];
      const std::string_view piece(text.data() + s.start, s.n);
      const int32_t id = vocab.find(piece);
      if (id != kNoToken) {
        out.push_back(id);
        continue;
      }
      for (char c : piece) out.push_back(byte_to_id_[static_cast<uint8_t>(c)]);
    }
  }

  std::string normal_piece(const Vocab& vocab, int32_t id) const override {
    const std::string& text = vocab.tokens[id].text;
    std::string out;
    out.reserve(text.size());
    for (size_t i = 0; i < text.size();) {
      if (text.compare(i, kSpace.size(), kSpace) == 0) {
        out.push_back(' ');
        i += kSpace.size();
      } else {
        out.push_back(text[i++]);
      }
    }
    return out;
  }

 private:
  int32_t byte_to_id_[256] = {};
  bool words_are_independent_ = false;
};

}  // namespace

Result<std::unique_ptr<TokenizerModel>> create_spm_model(const gguf::File& file, Vocab& vocab) {
  // llama.cpp's SentencePiece defaults; the file's metadata may override each.
  vocab.special.bos = 1;
  vocab.special.eos = 2;
  vocab.special.unk = 0;
  vocab.add_bos = true;
  vocab.add_eos = false;
  vocab.add_space_prefix = true;
  vocab.clean_spaces = false;
  return std::unique_ptr<TokenizerModel>(new SpmModel());
}

}  // namespace kairo::tokenizer
