#pragma once
// Constrained output on the engine thread: a request with a compiled grammar (Request::grammar) samples only tokens
// the grammar allows. Per request a GrammarConstraint holds the matcher and the masked logits row; per grammar a
// TokenMasker (with its mask caches) is shared by every request using it and kept for the next ones.
#include <cstdint>
#include <list>
#include <memory>
#include <utility>
#include <vector>

#include "grammar/matcher.h"
#include "grammar/stack_arena.h"
#include "grammar/token_masker.h"
#include "engine/request.h"
#include "grammar/token_trie.h"
#include "tokenizer/tokenizer.h"

namespace kairo::engine {

class GrammarConstraint {
 public:
  // thinking: Request::grammar_after_thinking; eog_ids: the tokens not sampled inside a thinking block.
  GrammarConstraint(std::shared_ptr<grammar::StackArena> arena, std::shared_ptr<grammar::TokenMasker> masker,
                    Request::Thinking thinking = {}, std::vector<int32_t> eog_ids = {});

  // logits with every token the grammar forbids now set to -inf (ids past the tokenizer's vocabulary too). The
  // row stays valid until the next call.
  const float* mask(const float* logits, int n_vocab);
  // Advances over a sampled token; false (state unchanged) when the grammar does not allow it.
  bool accept(int32_t token);
  bool can_end() const { return phase_ == Phase::Answer && matcher_.can_end(); }
  // Some token can still extend the output (false: the grammar's text is complete, or nothing can follow).
  bool can_continue() const { return phase_ != Phase::Answer || matcher_.can_continue(); }
  // Whether mask() left any token allowed.
  bool any_allowed() const { return any_allowed_; }

 private:
  enum class Phase {
    MayThink,  // the first token: the grammar's tokens, or the token that opens a thinking block
    Thinking,  // unconstrained until the closing token (end-of-generation excepted)
    Answer,    // the grammar applies
  };

  std::shared_ptr<grammar::TokenMasker> masker_;
  grammar::GrammarMatcher matcher_;
  Request::Thinking thinking_;
  std::vector<int32_t> eog_ids_;
  Phase phase_ = Phase::Answer;
  std::vector<uint64_t> bits_;
  std::vector<float> masked_;
  bool any_allowed_ = true;
};

// The token trie of the tokenizer (built on first use) and a masker per grammar, the most recently used kept.
class GrammarMaskers {
 public:
  GrammarMaskers(const tokenizer::Tokenizer& tokenizer, std::vector<int32_t> eog_ids, size_t max_kept = 32);
  std::shared_ptr<grammar::TokenMasker> get(const std::shared_ptr<grammar::StackArena>& arena);

 private:
  const tokenizer::Tokenizer& tokenizer_;
  std::vector<int32_t> eog_ids_;
  size_t max_kept_;
  std::shared_ptr<const grammar::TokenTrie> trie_;
  // Most recent first; holding the arena keeps the key alive.
  std::list<std::pair<std::shared_ptr<grammar::StackArena>, std::shared_ptr<grammar::TokenMasker>>> kept_;
};

}  // namespace kairo::engine
