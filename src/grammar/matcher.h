#pragma once
// Matches bytes against a compiled grammar, one chunk (a token's bytes) at a time, keeping enough history to
// roll back the last chunks (speculative decoding) and cheap to copy (n > 1 choices fork from one matcher).
//
//   auto arena = std::make_shared<StackArena>(*compile_gbnf(text));
//   GrammarMatcher m(arena);
//   m.accept("{\"a\"");   // false (state unchanged) when the bytes cannot continue a match
//   m.can_end();          // the bytes so far form a complete match
//   m.rollback(1);        // undo the last accepted chunk
#include <cstddef>
#include <deque>
#include <memory>
#include <string_view>

#include "grammar/stack_arena.h"

namespace kairo::grammar {

// A state with more live stacks than this means a grammar so ambiguous that matching would crawl; accept()
// refuses the bytes and dead() stays false so the caller can tell the two apart through too_ambiguous().
inline constexpr size_t kMaxLiveStacks = 4096;

class GrammarMatcher {
 public:
  explicit GrammarMatcher(std::shared_ptr<StackArena> arena, size_t max_rollback = 32);

  // Consumes `bytes` if every byte can continue the match; otherwise leaves the state unchanged and returns false.
  bool accept(std::string_view bytes);

  bool can_end() const;               // the input so far is a complete match
  bool dead() const { return stacks_.empty(); }  // nothing can follow (only after construction of an empty language)
  bool can_continue() const;          // some byte can follow
  bool too_ambiguous() const { return too_ambiguous_; }

  // Undoes the last `n` accepted chunks (at most rollback_depth()).
  void rollback(size_t n);
  size_t rollback_depth() const { return history_.size(); }
  void reset();

  const StackSet& stacks() const { return stacks_; }
  StackArena& arena() const { return *arena_; }
  const std::shared_ptr<StackArena>& shared_arena() const { return arena_; }

 private:
  std::shared_ptr<StackArena> arena_;
  size_t max_rollback_;
  StackSet stacks_;
  std::deque<StackSet> history_;
  StackSet scratch_a_, scratch_b_;
  bool too_ambiguous_ = false;
};

}  // namespace kairo::grammar
