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
// Masks for whole stacks are cached too, so a state seen before costs one bitset copy.
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
  // eog_tokens: allowed exactly when the matcher can end. Caches are cleared when they pass max_cache_bytes.
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

  std::shared_ptr<StackArena> arena_;
  std::shared_ptr<const TokenTrie> trie_;
  std::vector<int32_t> eog_tokens_;
  size_t words_;
  size_t max_entries_;
  std::unordered_map<StackId, Partial> partial_cache_;
  std::unordered_map<StackId, std::vector<uint64_t>> stack_cache_;
  std::vector<StackSet> depth_states_;
  Stats stats_;
};

}  // namespace kairo::grammar
