#include "engine/grammar_constraint.h"

#include <algorithm>
#include <cmath>

namespace kairo::engine {

GrammarConstraint::GrammarConstraint(std::shared_ptr<grammar::StackArena> arena,
                                     std::shared_ptr<grammar::TokenMasker> masker, Request::Thinking thinking,
                                     std::vector<int32_t> eog_ids)
    : masker_(std::move(masker)),
      matcher_(std::move(arena)),
      thinking_(thinking),
      eog_ids_(std::move(eog_ids)),
      bits_(masker_->mask_words()) {
  if (thinking_.open >= 0 && thinking_.close >= 0) phase_ = thinking_.starts_open ? Phase::Thinking : Phase::MayThink;
}

const float* GrammarConstraint::mask(const float* logits, int n_vocab) {
  if (phase_ == Phase::Thinking) {  // every token but end-of-generation: the block must close first
    masked_.assign(logits, logits + n_vocab);
    for (int32_t id : eog_ids_)
      if (id >= 0 && id < n_vocab) masked_[static_cast<size_t>(id)] = -INFINITY;
    any_allowed_ = true;
    return masked_.data();
  }
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
  if (phase_ == Phase::MayThink && thinking_.open < n_vocab) {
    masked_[static_cast<size_t>(thinking_.open)] = logits[thinking_.open];
    any_allowed_ = true;
  }
  return masked_.data();
}

bool GrammarConstraint::accept(int32_t token) {
  switch (phase_) {
    case Phase::Thinking:
      if (token == thinking_.close) phase_ = Phase::Answer;
      return true;
    case Phase::MayThink:
      if (token == thinking_.open) {
        phase_ = Phase::Thinking;
        return true;
      }
      phase_ = Phase::Answer;  // no thinking: this token is the answer's first
      if (!masker_->accept_token(matcher_, token)) {
        phase_ = Phase::MayThink;
        return false;
      }
      return true;
    case Phase::Answer:
      return masker_->accept_token(matcher_, token);
  }
  return false;
}

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
