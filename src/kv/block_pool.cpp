#include "kv/block_pool.h"

#include <algorithm>

#include "core/check.h"

namespace kairo::kv {

BlockPool::BlockPool(int32_t n_blocks, int32_t block_size, const BlockPool* anchor)
    : n_blocks_(n_blocks), block_size_(block_size), anchor_(anchor), free_(n_blocks), ref_(static_cast<size_t>(n_blocks), 0),
      holder_(static_cast<size_t>(n_blocks), kShared),
      gen_(static_cast<size_t>(n_blocks), 0), hash_(static_cast<size_t>(n_blocks), 0),
      parent_gen_(static_cast<size_t>(n_blocks), 0), parent_(static_cast<size_t>(n_blocks)),
      tokens_(static_cast<size_t>(n_blocks) * static_cast<size_t>(block_size), 0),
      extra_(static_cast<size_t>(n_blocks)) {
  KAIRO_CHECK(n_blocks >= 2 && block_size >= 1,
              "block pool: %d blocks of %d tokens (at least 2 blocks, the null block included, of 1 token or more)",
              n_blocks, block_size);
  for (int32_t b = 1; b < n_blocks; ++b) free_.push_back(BlockId{b});
}

void BlockPool::check_usable(BlockId b, const char* what) const {
  KAIRO_CHECK(b.value > 0 && b.value < n_blocks_, "block pool: %s block %d, which is not a usable block (1..%d)", what,
              b.value, n_blocks_ - 1);
}

void BlockPool::check_accounting() const {
  KAIRO_CHECK(free_.size() + n_used_ == n_blocks_ - 1,
              "block pool: %d free + %d referenced blocks do not make the pool's %d usable blocks", free_.size(),
              n_used_, n_blocks_ - 1);
}

double BlockPool::usage() const {
  return static_cast<double>(n_blocks_ - 1 - free_.size()) / static_cast<double>(n_blocks_ - 1);
}

std::optional<std::vector<BlockId>> BlockPool::allocate(int32_t n, BlockHolder holder) {
  if (n < 0 || n > free_.size()) return std::nullopt;
  std::vector<BlockId> out;
  out.reserve(static_cast<size_t>(n));
  for (int32_t i = 0; i < n; ++i) {
    // (Usable: only check_usable()'d blocks ever join the free list.)
    const BlockId b = free_.pop_front();
    // A referenced block in the free list would now be written by two requests.
    KAIRO_CHECK(ref_[idx(b)] == 0, "block pool: block %d was in the free list with ref count %d", b.value,
                ref_[idx(b)]);
    if (is_cached(b)) uncache(b);
    ref_[idx(b)] = 1;
    holder_[idx(b)] = holder;
    ++n_used_;
    out.push_back(b);
  }
  return out;
}

void BlockPool::touch(BlockId b, BlockHolder holder) {
  check_usable(b, "touching");
  int32_t& ref = ref_[idx(b)];
  if (ref == 0) {
    free_.remove(b);  // throws if it is not there: an unreferenced block outside the free list is lost for good
    holder_[idx(b)] = holder;
    ++n_used_;
  } else {
    KAIRO_CHECK(ref > 0 && !free_.contains(b), "block pool: touching block %d with ref count %d while it is %s",
                b.value, ref, free_.contains(b) ? "in the free list" : "out of the free list");
    holder_[idx(b)] = kShared;
  }
  ++ref;
}

void BlockPool::release(std::span<const BlockId> blocks, BlockHolder holder) {
  for (const BlockId b : blocks) {
    check_usable(b, "releasing");
    const size_t i = idx(b);
    KAIRO_CHECK(ref_[i] > 0,
                "block pool: request %llu releases block %d, whose ref count is already %d (released more often "
                "than referenced: a double free)",
                static_cast<unsigned long long>(holder), b.value, ref_[i]);
    KAIRO_CHECK(ref_[i] > 1 || holder_[i] == kShared || holder_[i] == holder,
                "block pool: request %llu releases block %d, which request %llu holds alone",
                static_cast<unsigned long long>(holder), b.value, static_cast<unsigned long long>(holder_[i]));
    if (--ref_[i] > 0) continue;
    --n_used_;
    // (push_* throws if the block is already in the free list.)
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
  check_usable(b, "publishing");
  // Only its holder may publish a block, once, with a full block of tokens, after the parent it chains to.
  KAIRO_CHECK(ref_[idx(b)] > 0 && !is_cached(b) && tokens.size() == static_cast<size_t>(block_size_),
              "block pool: publishing block %d with ref count %d, %s, with %zu tokens for a block of %d", b.value,
              ref_[idx(b)], is_cached(b) ? "already cached" : "not cached", tokens.size(), block_size_);
  KAIRO_CHECK(parent == kNullBlock || parents().is_cached(parent),
              "block pool: publishing block %d under parent block %d, which is not cached", b.value, parent.value);
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
