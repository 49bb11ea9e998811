#include "kv/block_pool.h"

#include <algorithm>
#include <cassert>

namespace kairo::kv {

BlockPool::BlockPool(int32_t n_blocks, int32_t block_size, const BlockPool* anchor)
    : n_blocks_(n_blocks), block_size_(block_size), anchor_(anchor), free_(n_blocks), ref_(static_cast<size_t>(n_blocks), 0),
      gen_(static_cast<size_t>(n_blocks), 0), hash_(static_cast<size_t>(n_blocks), 0),
      parent_gen_(static_cast<size_t>(n_blocks), 0), parent_(static_cast<size_t>(n_blocks)),
      tokens_(static_cast<size_t>(n_blocks) * static_cast<size_t>(block_size), 0),
      extra_(static_cast<size_t>(n_blocks)) {
  assert(n_blocks >= 2 && block_size >= 1);
  for (int32_t b = 1; b < n_blocks; ++b) free_.push_back(BlockId{b});
}

double BlockPool::usage() const {
  return static_cast<double>(n_blocks_ - 1 - free_.size()) / static_cast<double>(n_blocks_ - 1);
}

std::optional<std::vector<BlockId>> BlockPool::allocate(int32_t n) {
  if (n < 0 || n > free_.size()) return std::nullopt;
  std::vector<BlockId> out;
  out.reserve(static_cast<size_t>(n));
  for (int32_t i = 0; i < n; ++i) {
    const BlockId b = free_.pop_front();
    if (is_cached(b)) uncache(b);
    ref_[idx(b)] = 1;
    out.push_back(b);
  }
  return out;
}

void BlockPool::touch(BlockId b) {
  assert(b != kNullBlock);
  if (ref_[idx(b)]++ == 0) free_.remove(b);
}

void BlockPool::release(std::span<const BlockId> blocks) {
  for (const BlockId b : blocks) {
    assert(b != kNullBlock && ref_[idx(b)] > 0);
    if (--ref_[idx(b)] > 0) continue;
    if (is_cached(b)) {
      free_.push_back(b);
    } else {
      free_.push_front(b);
    }
  }
}

bool BlockPool::chain_live(BlockId b) const {
  const BlockId p = parent_[idx(b)];
  return p == kNullBlock || parents().gen_[idx(p)] == parent_gen_[idx(b)];
}

std::optional<BlockId> BlockPool::lookup(uint64_t hash, BlockId parent, std::span<const int32_t> tokens,
                                         std::string_view extra_keys) const {
  const auto it = by_hash_.find(hash);
  if (it == by_hash_.end()) return std::nullopt;
  const BlockId b = it->second;
  const size_t bs = static_cast<size_t>(block_size_);
  if (tokens.size() != bs || parent_[idx(b)] != parent || !chain_live(b) || extra_[idx(b)] != extra_keys) {
    return std::nullopt;
  }
  if (!std::equal(tokens.begin(), tokens.end(), tokens_.begin() + static_cast<std::ptrdiff_t>(idx(b) * bs))) {
    return std::nullopt;
  }
  return b;
}

bool BlockPool::register_block(BlockId b, uint64_t hash, BlockId parent, std::span<const int32_t> tokens,
                               std::string_view extra_keys) {
  assert(b != kNullBlock && !is_cached(b) && tokens.size() == static_cast<size_t>(block_size_));
  assert(parent == kNullBlock || parents().is_cached(parent));
  if (const auto it = by_hash_.find(hash); it != by_hash_.end()) {
    // A holder whose parent was evicted can never be reached again: let the new block take its place.
    if (chain_live(it->second)) return false;
    uncache(it->second);
  }
  const size_t i = idx(b);
  gen_[i] = next_gen_++;
  hash_[i] = hash;
  parent_[i] = parent;
  parent_gen_[i] = parent == kNullBlock ? 0 : parents().gen_[idx(parent)];
  std::copy(tokens.begin(), tokens.end(), tokens_.begin() + static_cast<std::ptrdiff_t>(i * tokens.size()));
  extra_[i].assign(extra_keys);
  by_hash_.emplace(hash, b);
  return true;
}

void BlockPool::uncache(BlockId b) {
  const size_t i = idx(b);
  by_hash_.erase(hash_[i]);
  gen_[i] = 0;
  hash_[i] = 0;
  parent_[i] = kNullBlock;
  parent_gen_[i] = 0;
  extra_[i].clear();
  // A free block that lost its content has no reuse value any more: hand it out before cached ones.
  if (free_.contains(b)) {
    free_.remove(b);
    free_.push_front(b);
  }
}

}  // namespace kairo::kv
