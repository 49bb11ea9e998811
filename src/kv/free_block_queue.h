#pragma once
// The pool's free list: an intrusive doubly-linked list threaded through per-block prev/next arrays (vLLM's
// FreeKVCacheBlockQueue), so push, pop and removing an arbitrary block (a cached block revived by a prefix hit)
// are all O(1) with no allocation. The head is evicted/allocated first. Misuse (a block pushed twice, removing one
// that is not there) throws InvariantViolation (core/check.h) in every build: it would corrupt the links.
#include <cstdint>
#include <vector>

#include "kv/block_id.h"

namespace kairo::kv {

class FreeBlockQueue {
 public:
  // Capacity for block ids 0..n_blocks-1; starts empty.
  explicit FreeBlockQueue(int32_t n_blocks);

  int32_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  bool contains(BlockId b) const { return next_[idx(b)] != kDetached; }

  void push_back(BlockId b);
  void push_front(BlockId b);
  BlockId pop_front();  // requires !empty()
  void remove(BlockId b);  // requires contains(b)

  // Head-to-tail order (tests, debugging).
  std::vector<BlockId> to_vector() const;

 private:
  static constexpr int32_t kDetached = -1;
  static size_t idx(BlockId b) { return static_cast<size_t>(b.value); }
  void link_after(int32_t prev, int32_t b);
  void unlink(int32_t b);  // b must be linked
  void check_joinable(BlockId b) const;  // in range and not already linked

  int32_t sentinel_;  // index n_blocks: prev = tail, next = head
  std::vector<int32_t> prev_, next_;
  int32_t size_ = 0;
};

}  // namespace kairo::kv
