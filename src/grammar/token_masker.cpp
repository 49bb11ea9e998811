#include "grammar/token_masker.h"

#include <algorithm>

namespace kairo::grammar {

TokenMasker::TokenMasker(std::shared_ptr<StackArena> arena, std::shared_ptr<const TokenTrie> trie,
                         std::vector<int32_t> eog_tokens, size_t max_cache_bytes)
    : arena_(std::move(arena)),
      trie_(std::move(trie)),
      eog_tokens_(std::move(eog_tokens)),
      words_((static_cast<size_t>(trie_->n_vocab()) + 63) / 64),
      max_entries_(std::max<size_t>(16, max_cache_bytes / std::max<size_t>(1, words_ * 8))),
      // A sixteenth of the cache budget for the walk's DFA, at 1 KiB of transitions per set: 4096 sets by default.
      max_sets_(std::max<size_t>(16, max_cache_bytes / 16 / 1024)),
      depth_sets_(trie_->max_depth() + 1) {}

uint32_t TokenMasker::intern_set(StackSet stacks) {
  uint64_t h = 1469598103934665603ull;
  for (StackId id : stacks) h = (h ^ id) * 1099511628211ull;
  std::vector<uint32_t>& bucket = set_index_[h];
  for (uint32_t i : bucket)
    if (sets_[i].stacks == stacks) return i;
  // Bounded: a grammar whose walks meet ever new sets starts the table afresh (indices held by a walk in progress
  // are never dropped: the table is only cleared between walks, in walk()).
  SetState s;
  s.empty = stacks.empty();
  s.popped = std::binary_search(stacks.begin(), stacks.end(), StackArena::kContext);
  s.live = std::any_of(stacks.begin(), stacks.end(),
                       [](StackId id) { return id != StackArena::kContext && id != StackArena::kAccepted; });
  s.stacks = std::move(stacks);
  s.next.assign(256, kUnknownSet);
  sets_.push_back(std::move(s));
  bucket.push_back(static_cast<uint32_t>(sets_.size() - 1));
  ++stats_.walk_sets;
  return static_cast<uint32_t>(sets_.size() - 1);
}

uint32_t TokenMasker::next_set(uint32_t from, uint8_t byte) {
  uint32_t to = sets_[from].next[byte];
  if (to != kUnknownSet) return to;
  arena_->advance(sets_[from].stacks, byte, scratch_);
  to = intern_set(scratch_);
  sets_[from].next[byte] = to;  // after interning: sets_ may have grown
  return to;
}

void TokenMasker::walk(uint32_t first, uint32_t last, uint32_t base_depth, const StackSet& start,
                       std::vector<uint64_t>& bits, std::vector<uint32_t>* resumes) {
  if (sets_.size() > max_sets_) {
    sets_.clear();
    set_index_.clear();
  }
  const auto& nodes = trie_->nodes();
  const auto& tokens = trie_->tokens();
  depth_sets_[base_depth] = intern_set(start);
  for (uint32_t i = first; i < last;) {
    const TokenTrie::Node& n = nodes[i];
    const uint32_t here = next_set(depth_sets_[n.depth - 1], n.byte);
    depth_sets_[n.depth] = here;
    const SetState& s = sets_[here];
    if (s.empty) {
      i = n.subtree_end;
      continue;
    }
    for (uint32_t t = n.token_begin; t < n.token_end; ++t) {
      const auto id = static_cast<uint32_t>(tokens[t]);
      bits[id >> 6] |= uint64_t{1} << (id & 63);
    }
    if (s.popped && resumes && n.subtree_end > i + 1) resumes->push_back(i);
    i = s.live ? i + 1 : n.subtree_end;
  }
}

const TokenMasker::Partial& TokenMasker::partial_mask(StackId truncated) {
  auto it = partial_cache_.find(truncated);
  if (it != partial_cache_.end()) return it->second;
  if (partial_cache_.size() >= max_entries_) partial_cache_.clear();
  ++stats_.truncated_walks;
  Partial p;
  p.bits.assign(words_, 0);
  walk(1, static_cast<uint32_t>(trie_->nodes().size()), 0, StackSet{truncated}, p.bits, &p.resume_nodes);
  return partial_cache_.emplace(truncated, std::move(p)).first->second;
}

const std::vector<uint64_t>& TokenMasker::stack_mask(StackId id) {
  auto it = stack_cache_.find(id);
  if (it != stack_cache_.end()) {
    ++stats_.stack_hits;
    return it->second;
  }
  if (stack_cache_.size() >= max_entries_) stack_cache_.clear();
  StackId rest = StackArena::kAccepted;
  const StackId truncated = arena_->truncate(id, kContextDepth, rest);
  std::vector<uint64_t> bits = partial_mask(truncated).bits;
  if (truncated != id) {
    // Copy: walking can evict or rehash the partial cache.
    const std::vector<uint32_t> resumes = partial_cache_.at(truncated).resume_nodes;
    if (!resumes.empty()) {
      StackSet below;
      arena_->expand_stack(rest, below);
      sort_unique(below);
      const auto& nodes = trie_->nodes();
      for (uint32_t r : resumes) {
        ++stats_.resumed_walks;
        walk(r + 1, nodes[r].subtree_end, nodes[r].depth, below, bits, nullptr);
      }
    }
  }
  return stack_cache_.emplace(id, std::move(bits)).first->second;
}

void TokenMasker::fill_mask(const GrammarMatcher& matcher, std::span<uint64_t> mask) {
  std::fill(mask.begin(), mask.end(), 0);
  for (StackId id : matcher.stacks()) {
    if (id == StackArena::kAccepted) {
      for (int32_t t : eog_tokens_) mask[static_cast<size_t>(t) >> 6] |= uint64_t{1} << (t & 63);
      continue;
    }
    const auto& bits = stack_mask(id);
    for (size_t w = 0; w < words_; ++w) mask[w] |= bits[w];
  }
}

bool TokenMasker::accept_token(GrammarMatcher& matcher, int32_t token) const {
  if (std::find(eog_tokens_.begin(), eog_tokens_.end(), token) != eog_tokens_.end()) return matcher.can_end();
  if (token < 0 || token >= trie_->n_vocab()) return false;
  const std::string& bytes = trie_->bytes(token);
  return !bytes.empty() && matcher.accept(bytes);
}

}  // namespace kairo::grammar
