// Byte-level BPE as in llama.cpp's llm_tokenizer_bpe: the pre-tokenizer splits the text into words; each word's bytes
// start as one symbol each (the byte-level characters), and the adjacent pair with the lowest merge rank is merged
// until no listed merge applies. Symbols are interned ids (vocab ids, plus extra ids for merge parts that are not
// tokens), so merging compares integers and never builds strings.
#include <algorithm>
#include <unordered_map>

#include "core/format.h"
#include "gguf/gguf_file.h"
#include "tokenizer/byte_level.h"
#include "tokenizer/pre_tokenizer.h"
#include "tokenizer/tokenizer_model.h"

namespace kairo::tokenizer {
namespace {

struct Symbol {
  int prev;
  int next;
  int32_t sym;   // interned text id; < n_vocab means it is that token; -1: a byte with no symbol
  size_t begin;  // raw bytes of the word
  size_t len;    // 0 once merged into its left neighbour
};

struct Bigram {
  int left;
  int right;
  int32_t rank;
  int32_t left_sym;   // the sides as they were when queued; a change means the bigram is stale
  int32_t right_sym;
  int32_t result;
};

struct BigramOrder {
  bool operator()(const Bigram& l, const Bigram& r) const {
    return l.rank > r.rank || (l.rank == r.rank && l.left > r.left);
  }
};

struct Merge {
  int32_t rank;
  int32_t result;
};

uint64_t pair_key(int32_t a, int32_t b) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(a)) << 32) | static_cast<uint32_t>(b);
}

// Symbol pair -> merge, open addressing with linear probing: one cache line per lookup, where a node-based
// std::unordered_map costs several (the lookup is most of BPE's time).
class MergeTable {
 public:
  void build(const std::vector<std::pair<uint64_t, Merge>>& entries) {
    size_t cap = 16;
    while (cap < entries.size() * 2) cap *= 2;
    shift_ = 64;
    for (size_t c = cap; c > 1; c >>= 1) --shift_;
    slots_.assign(cap, Slot{kEmpty, {}});
    for (const auto& [key, merge] : entries) {
      size_t i = slot_of(key);
      while (slots_[i].key != kEmpty && slots_[i].key != key) i = (i + 1) & (slots_.size() - 1);
      if (slots_[i].key == kEmpty) slots_[i] = Slot{key, merge};  // first listing of a pair wins
    }
  }
  const Merge* find(uint64_t key) const {
    for (size_t i = slot_of(key);; i = (i + 1) & (slots_.size() - 1)) {
      if (slots_[i].key == key) return &slots_[i].merge;
      if (slots_[i].key == kEmpty) return nullptr;
    }
  }

 private:
  static constexpr uint64_t kEmpty = ~uint64_t{0};  // pair (-1, -1): never a real key (-1 is "no symbol")
  struct Slot {
    uint64_t key;
    Merge merge;
  };
  size_t slot_of(uint64_t key) const { return static_cast<size_t>((key * 0x9E3779B97F4A7C15ull) >> shift_); }
  std::vector<Slot> slots_;
  int shift_ = 60;
};

class BpeModel final : public TokenizerModel {
 public:
  explicit BpeModel(std::unique_ptr<PreTokenizer> pre) : pre_(std::move(pre)) {}

  Status load_merges(const gguf::File& file, const Vocab& vocab) {
    const gguf::Value* merges = file.find("tokenizer.ggml.merges");
    if (!merges) {
      return Error{strprintf("%s: BPE tokenizer without merges (metadata key 'tokenizer.ggml.merges' is missing)",
                             file.path().c_str())};
    }
    if (merges->type() != gguf::ValueType::ARRAY || merges->elem_type() != gguf::ValueType::STRING) {
      return Error{strprintf("%s: 'tokenizer.ggml.merges' must be an array of strings", file.path().c_str())};
    }
    n_vocab_ = vocab.n_tokens();
    const auto& items = merges->items();
    std::vector<std::pair<uint64_t, Merge>> entries;
    entries.reserve(items.size());
    for (size_t i = 0; i < items.size(); ++i) {
      const std::string& m = *items[i].as_string();
      const size_t space = m.find(' ', 1);
      if (space == std::string::npos) {
        return Error{strprintf("%s: BPE merge %zu %s is not two symbols separated by a space", file.path().c_str(), i,
                               quote_for_error(m).c_str())};
      }
      const std::string_view left(m.data(), space);
      const std::string_view right(m.data() + space + 1, m.size() - space - 1);
      const int32_t l = intern(vocab, left);
      const int32_t r = intern(vocab, right);
      const int32_t result = intern(vocab, std::string(left) + std::string(right));
      entries.emplace_back(pair_key(l, r), Merge{static_cast<int32_t>(i), result});
    }
    merges_.build(entries);
    for (int b = 0; b < 256; ++b) {
      const std::string& ch = byte_level_char(static_cast<uint8_t>(b));
      byte_token_[b] = vocab.find(ch);
      const auto it = extra_ids_.find(ch);
      byte_sym_[b] = byte_token_[b] != kNoToken ? byte_token_[b] : (it != extra_ids_.end() ? it->second : -1);
    }
    return Status::success();
  }

  Status prepare(const Vocab& vocab) override { return Status::success(); }

  // Merges never cross a pre-tokenizer word, so the tokens of the words before any word are final: a bounded
  // encoding may stop there.
  void encode(const Vocab& vocab, std::string_view text, bool /*after_special*/, std::vector<int32_t>& out,
              EncodeBudget* budget) const override {
    Scratch scratch;
    std::string encoded;
    pre_->for_each_word(text, [&](size_t begin, size_t end) {
      if (budget && budget->stop_before(out.size(), text.size() - begin)) return false;
      const std::string_view word = text.substr(begin, end - begin);
      if (pre_->config().ignore_merges) {
        encoded.clear();
        byte_level_encode(word, encoded);
        const int32_t id = vocab.find(encoded);
        if (id != kNoToken) {
          out.push_back(id);
          return true;
        }
      }
      encode_word(word, scratch, out);
      return true;
    });
  }

  // A byte without a byte token is dropped (as llama.cpp does) where a merge result is not a token.
  bool keeps_every_byte() const override {
    return std::none_of(std::begin(byte_token_), std::end(byte_token_), [](int32_t id) { return id == kNoToken; });
  }

  std::string normal_piece(const Vocab& vocab, int32_t id) const override {
    return byte_level_decode(vocab.tokens[id].text);
  }

 private:
  int32_t intern(const Vocab& vocab, std::string_view text) {
    const int32_t id = vocab.find(text);
    if (id != kNoToken) return id;
    const auto [it, inserted] = extra_ids_.emplace(std::string(text), n_vocab_ + static_cast<int32_t>(extra_ids_.size()));
    return it->second;
  }

  struct Scratch {
    std::vector<Symbol> symbols;
    std::vector<Bigram> heap;
  };

  void encode_word(std::string_view word, Scratch& scratch, std::vector<int32_t>& out) const {
    std::vector<Symbol>& symbols = scratch.symbols;
    symbols.clear();
    for (size_t i = 0; i < word.size(); ++i) {
      const int idx = static_cast<int>(i);
      symbols.push_back({idx - 1, i + 1 == word.size() ? -1 : idx + 1, byte_sym_[static_cast<uint8_t>(word[i])], i, 1});
    }
    std::vector<Bigram>& heap = scratch.heap;
    heap.clear();
    const BigramOrder order;
    const auto try_add = [&](int left, int right) {
      if (left == -1 || right == -1) return;
      const int32_t l = symbols[left].sym;
      const int32_t r = symbols[right].sym;
      if (l < 0 || r < 0) return;
      const Merge* m = merges_.find(pair_key(l, r));
      if (!m) return;
      heap.push_back({left, right, m->rank, l, r, m->result});
      std::push_heap(heap.begin(), heap.end(), order);
    };
    for (int i = 1; i < static_cast<int>(symbols.size()); ++i) try_add(i - 1, i);

    while (!heap.empty()) {
      std::pop_heap(heap.begin(), heap.end(), order);
      const Bigram bigram = heap.back();
      heap.pop_back();
      Symbol& left = symbols[bigram.left];
      Symbol& right = symbols[bigram.right];
      if (left.len == 0 || right.len == 0 || left.sym != bigram.left_sym || right.sym != bigram.right_sym) continue;
      left.sym = bigram.result;
      left.len += right.len;
      right.len = 0;
      left.next = right.next;
      if (right.next >= 0) symbols[right.next].prev = bigram.left;
      try_add(left.prev, bigram.left);
      try_add(bigram.left, left.next);
    }

    for (int i = 0; i != -1 && !symbols.empty(); i = symbols[i].next) {
      const Symbol& s = symbols[i];
      if (s.sym >= 0 && s.sym < n_vocab_) {
        out.push_back(s.sym);
        continue;
      }
      // Not a token (a merge result missing from the vocab): spell it in byte tokens; bytes without one are
      // dropped, as llama.cpp does.
      for (size_t j = s.begin; j < s.begin + s.len; ++j) {
        const int32_t id = byte_token_[static_cast<uint8_t>(word[j])];
        if (id != kNoToken) out.push_back(id);
      }
    }
  }

  std::unique_ptr<PreTokenizer> pre_;
  int32_t n_vocab_ = 0;
  MergeTable merges_;
  std::unordered_map<std::string, int32_t> extra_ids_;
  int32_t byte_sym_[256] = {};
  int32_t byte_token_[256] = {};
};

}  // namespace

Result<std::unique_ptr<TokenizerModel>> create_bpe_model(const gguf::File& file, Vocab& vocab) {
  if (vocab.pre.empty()) {
    return Error{strprintf("%s: BPE tokenizer without a pre-tokenizer name (tokenizer.ggml.pre is missing); "
                           "re-convert the model with a recent llama.cpp convert_hf_to_gguf.py", file.path().c_str())};
  }
  auto pre = PreTokenizer::create(vocab.pre);
  if (!pre.ok()) return Error{file.path() + ": " + pre.error().message};
  const PreTokenizerConfig config = (*pre)->config();
  // llama.cpp's BPE defaults; the file's metadata may override each.
  vocab.special.bos = 11;
  vocab.special.eos = 11;
  vocab.special.unk = kNoToken;
  vocab.add_bos = config.add_bos;
  vocab.add_eos = false;
  vocab.add_space_prefix = false;
  vocab.clean_spaces = config.clean_spaces;
  auto model = std::make_unique<BpeModel>(std::move(pre).value());
  KAIRO_TRY_STATUS(model->load_merges(file, vocab));
  return std::unique_ptr<TokenizerModel>(std::move(model));
}

}  // namespace kairo::tokenizer
