#include "engine/grammar_constraint.h"

#include <algorithm>
#include <cmath>

namespace kairo::engine {

GrammarConstraint::GrammarConstraint(std::shared_ptr<grammar::StackArena> arena,
                                     std::shared_ptr<grammar::TokenMasker> masker)
    : masker_(std::move(masker)), matcher_(std::move(arena)), bits_(masker_->mask_words()) {}

const float* GrammarConstraint::mask(const float* logits, int n_vocab) {
  masker_->fill_mask(matcher_, bits_);
  masked_.assign(static_cast<size_t>(n_vocab), -INFINITY);
  any_allowed_ = false;
  const int n_words = static_cast<int>(std::min<size_t>(bits_.size(), (static_cast<size_t>(n_vocab) + 63) / 64));
  for (int w = 0; w < n_words; ++w) {
    for (uint64_t word = bits_[static_cast<size_t>(w)]; word != 0; word &= word - 1) {
      const int t = w * 64 + __builtin_ctzll(word);
      if (t >= n_vocab) break;
      masked_[static_cast<size_t>(t)] = logits[t];
      any_allowed_ = true;
    }
  }
  return masked_.data();
}

bool GrammarConstraint::accept(int32_t token) { return masker_->accept_token(matcher_, token); }

GrammarMaskers::GrammarMaskers(const tokenizer::Tokenizer& tokenizer, std::vector<int32_t> eog_ids, size_t max_kept)
    : tokenizer_(tokenizer), eog_ids_(std::move(eog_ids)), max_kept_(max_kept) {}

std::shared_ptr<grammar::TokenMasker> GrammarMaskers::get(const std::shared_ptr<grammar::StackArena>& arena) {
  for (auto it = kept_.begin(); it != kept_.end(); ++it) {
    if (it->first != arena) continue;
    kept_.splice(kept_.begin(), kept_, it);
    return kept_.front().second;
  }
  if (!trie_) {
    // What each token adds to the text; control and end-of-generation tokens add nothing the grammar can match
    // (end-of-generation is allowed exactly when the grammar can end).
    std::vector<std::string> bytes;
    bytes.reserve(static_cast<size_t>(tokenizer_.n_vocab()));
    for (int32_t id = 0; id < tokenizer_.n_vocab(); ++id)
      bytes.push_back(tokenizer_.is_eog(id) || tokenizer_.is_control(id) ? "" : tokenizer_.token_to_piece(id));
    trie_ = std::make_shared<grammar::TokenTrie>(bytes);
  }
  auto masker = std::make_shared<grammar::TokenMasker>(arena, trie_, eog_ids_);
  kept_.emplace_front(arena, masker);
  if (kept_.size() > max_kept_) kept_.pop_back();
  return masker;
}

}  // namespace kairo::engine
