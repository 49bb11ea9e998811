#pragma once
// Which tokens may come next: the allowed-token bit mask for a matcher's state, computed from the token trie
// and cached so decode steps rarely walk the trie.
//
// The cache follows xgrammar's adaptive token-mask cache in spirit: a mask is split into the part decided by
// the top frames of a stack alone and the part that depends on the rest of it.
//  - A stack is truncated to its top kContextDepth frames over a stand-in bottom (StackArena::kContext), and the
//    trie is walked once per truncated stack. Tokens consumed entirely within those frames are allowed whatever
//    lies below; the trie nodes where some path popped into the stand-in are remembered ("resume points").
//  - For a real stack, the cached part is ORed in and the walk continues only below the resume points, from the
//    real rest of the stack: usually a handful of short subtrees (a string's closing quote and what follows it).
// Exact: the mask equals feeding every token's bytes to the matcher (tests/grammar check this brute force).
// Masks for whole stacks are cached too, so a state seen before costs one bitset copy. The walks themselves step
// through a DFA over sets of stacks, built as they go, so a trie node costs a table lookup.
#include <cstdint>
#include <memory>
#include <span>
#include <unordered_map>
#include <vector>

#include "grammar/matcher.h"
#include "grammar/token_trie.h"

namespace kairo::grammar {

inline constexpr int kContextDepth = 3;

class TokenMasker {
 public:
  // eog_tokens: allowed exactly when the matcher can end. Caches are cleared when they pass max_cache_bytes (the
  // walk's DFA of stack sets when it passes a sixteenth of it).
  TokenMasker(std::shared_ptr<StackArena> arena, std::shared_ptr<const TokenTrie> trie,
              std::vector<int32_t> eog_tokens, size_t max_cache_bytes = size_t{64} << 20);

  size_t mask_words() const { return words_; }  // uint64 words per mask: ceil(n_vocab / 64)

  // Bit t of `mask` (t / 64, t % 64) set when token t may follow the matcher's state.
  void fill_mask(const GrammarMatcher& matcher, std::span<uint64_t> mask);

  // Feeds one token: an end-of-generation token is accepted when the match can end (and changes nothing).
  bool accept_token(GrammarMatcher& matcher, int32_t token) const;

  struct Stats {
    uint64_t stack_hits = 0;       // whole-stack masks served from the cache
    uint64_t truncated_walks = 0;  // full trie walks (one per new truncated stack)
    uint64_t resumed_walks = 0;    // subtree walks below resume points
    uint64_t walk_sets = 0;        // distinct sets of stacks the walks met (the DFA's states)
  };
  const Stats& stats() const { return stats_; }

 private:
  struct Partial {
    std::vector<uint64_t> bits;
    std::vector<uint32_t> resume_nodes;
  };
  const std::vector<uint64_t>& stack_mask(StackId id);
  const Partial& partial_mask(StackId truncated);
  // Walks trie nodes [first, last) whose parents sit at base_depth with `start` as their state, setting the bits of
  // tokens that can be consumed; records resume points when `resumes` is given.
  void walk(uint32_t first, uint32_t last, uint32_t base_depth, const StackSet& start, std::vector<uint64_t>& bits,
            std::vector<uint32_t>* resumes);

  // The walk's states as a lazily built DFA over sets of stacks: a trie walk meets few distinct sets (inside a
  // string, every ordinary byte leads back to the same one), so each node costs one table lookup instead of
  // advancing every stack of the set and merging the results.
  struct SetState {
    StackSet stacks;
    bool empty = false;   // no stack survived: the subtree is dead
    bool popped = false;  // some stack popped into the stand-in bottom (a resume point)
    bool live = false;    // some stack can take more bytes
    std::vector<uint32_t> next;  // per byte, the next set's index (kUnknownSet until first taken)
  };
  static constexpr uint32_t kUnknownSet = UINT32_MAX;
  uint32_t intern_set(StackSet stacks);
  uint32_t next_set(uint32_t from, uint8_t byte);

  std::shared_ptr<StackArena> arena_;
  std::shared_ptr<const TokenTrie> trie_;
  std::vector<int32_t> eog_tokens_;
  size_t words_;
  size_t max_entries_;
  size_t max_sets_;
  std::unordered_map<StackId, Partial> partial_cache_;
  std::unordered_map<StackId, std::vector<uint64_t>> stack_cache_;
  std::vector<uint32_t> depth_sets_;  // the walk's set index at each trie depth
  std::vector<SetState> sets_;
  std::unordered_map<uint64_t, std::vector<uint32_t>> set_index_;  // hash of a set's stacks -> its indices
  StackSet scratch_;
  Stats stats_;
};

}  // namespace kairo::grammar
