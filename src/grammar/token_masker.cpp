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
      depth_states_(trie_->max_depth() + 1) {}

void TokenMasker::walk(uint32_t first, uint32_t last, uint32_t base_depth, const StackSet& start,
                       std::vector<uint64_t>& bits, std::vector<uint32_t>* resumes) {
  const auto& nodes = trie_->nodes();
  const auto& tokens = trie_->tokens();
  depth_states_[base_depth] = start;
  for (uint32_t i = first; i < last;) {
    const TokenTrie::Node& n = nodes[i];
    StackSet& here = depth_states_[n.depth];
    arena_->advance(depth_states_[n.depth - 1], n.byte, here);
    if (here.empty()) {
      i = n.subtree_end;
      continue;
    }
    for (uint32_t t = n.token_begin; t < n.token_end; ++t) {
      const auto id = static_cast<uint32_t>(tokens[t]);
      bits[id >> 6] |= uint64_t{1} << (id & 63);
    }
    const bool has_children = n.subtree_end > i + 1;
    const bool popped = std::binary_search(here.begin(), here.end(), StackArena::kContext);
    if (popped && resumes && has_children) resumes->push_back(i);
    const bool live = std::any_of(here.begin(), here.end(), [](StackId s) {
      return s != StackArena::kContext && s != StackArena::kAccepted;
    });
    i = live ? i + 1 : n.subtree_end;
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
