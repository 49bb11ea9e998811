#include "kv/free_block_queue.h"

#include <cassert>

namespace kairo::kv {

FreeBlockQueue::FreeBlockQueue(int32_t n_blocks)
    : sentinel_(n_blocks), prev_(static_cast<size_t>(n_blocks) + 1, kDetached),
      next_(static_cast<size_t>(n_blocks) + 1, kDetached) {
  prev_[static_cast<size_t>(sentinel_)] = sentinel_;
  next_[static_cast<size_t>(sentinel_)] = sentinel_;
}

void FreeBlockQueue::link_after(int32_t prev, int32_t b) {
  const int32_t next = next_[static_cast<size_t>(prev)];
  prev_[static_cast<size_t>(b)] = prev;
  next_[static_cast<size_t>(b)] = next;
  next_[static_cast<size_t>(prev)] = b;
  prev_[static_cast<size_t>(next)] = b;
  ++size_;
}

void FreeBlockQueue::push_back(BlockId b) {
  assert(b.value >= 0 && b.value < sentinel_ && !contains(b));
  link_after(prev_[static_cast<size_t>(sentinel_)], b.value);
}

void FreeBlockQueue::push_front(BlockId b) {
  assert(b.value >= 0 && b.value < sentinel_ && !contains(b));
  link_after(sentinel_, b.value);
}

BlockId FreeBlockQueue::pop_front() {
  assert(!empty());
  const BlockId head{next_[static_cast<size_t>(sentinel_)]};
  remove(head);
  return head;
}

void FreeBlockQueue::remove(BlockId b) {
  assert(contains(b));
  const int32_t prev = prev_[idx(b)], next = next_[idx(b)];
  next_[static_cast<size_t>(prev)] = next;
  prev_[static_cast<size_t>(next)] = prev;
  prev_[idx(b)] = kDetached;
  next_[idx(b)] = kDetached;
  --size_;
}

std::vector<BlockId> FreeBlockQueue::to_vector() const {
  std::vector<BlockId> out;
  out.reserve(static_cast<size_t>(size_));
  for (int32_t b = next_[static_cast<size_t>(sentinel_)]; b != sentinel_; b = next_[static_cast<size_t>(b)]) {
    out.emplace_back(b);
  }
  return out;
}

}  // namespace kairo::kv
