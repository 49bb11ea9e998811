#pragma once
// The matcher's pushdown stacks, stored once each: a stack is a node (position, parent), nodes are hash-consed
// so equal stacks are the same id, and a matcher state is a sorted set of ids. That makes states cheap to copy
// (cloning for n > 1, history for rollback) and gives every distinct stack an id the token-mask cache can key on.
//
// A node's position is the element its frame matches next; the top frame's element is always a byte set (states
// are kept expanded). Node kAccepted is the empty stack: the input so far is a complete match. Node kContext is
// a stand-in bottom for "the rest of some stack" used by the mask cache (token_masker.h).
//
// Expansion is iterative, with tail calls (a rule reference that ends its alternative pushes no return frame),
// so right-recursive repetition runs in constant depth. Not thread-safe: one arena serves one engine thread.
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "grammar/byte_grammar.h"

namespace kairo::grammar {

using StackId = uint32_t;
using StackSet = std::vector<StackId>;  // sorted, unique

class StackArena {
 public:
  static constexpr StackId kAccepted = 0;
  static constexpr StackId kContext = 1;

  explicit StackArena(ByteGrammar grammar);

  const ByteGrammar& grammar() const { return grammar_; }

  struct Node {
    uint32_t pos = 0;
    StackId parent = kAccepted;
  };
  const Node& node(StackId id) const { return nodes_[id]; }
  size_t n_nodes() const { return nodes_.size(); }

  // The expanded state at the start of the grammar.
  StackSet initial();

  // Every stack reachable by matching `byte` at the top of one of `from`'s stacks. kAccepted and kContext
  // do not advance.
  void advance(const StackSet& from, uint8_t byte, StackSet& to);

  // Stacks after the top of stack `id` matched `byte` (memoized); empty when it does not match.
  const StackId* advance_one(StackId id, uint8_t byte, size_t& count);

  // The stack `id` with all frames below its top `depth` replaced by kContext (itself when it is not deeper).
  StackId truncate(StackId id, int depth, StackId& rest);

  // The expansion of a stack whose top frame has not been expanded yet (used after truncation to continue
  // into the real rest of a stack).
  void expand_stack(StackId id, StackSet& out);

 private:
  StackId intern(uint32_t pos, StackId parent);
  // Expands (pos, parent) into stacks whose top is a byte set (or kAccepted/kContext), appending to out.
  void expand(uint32_t pos, StackId parent, StackSet& out);

  ByteGrammar grammar_;
  std::vector<Node> nodes_;
  std::unordered_map<uint64_t, StackId> index_;
  struct Span {
    uint32_t offset = 0;
    uint32_t count = 0;
  };
  std::unordered_map<uint64_t, Span> transitions_;  // (stack, byte) -> stacks
  std::vector<StackId> transition_pool_;
  std::vector<std::pair<uint32_t, StackId>> work_;      // expansion scratch
  std::vector<uint64_t> seen_;                          // expansion scratch
};

void sort_unique(StackSet& s);

}  // namespace kairo::grammar
