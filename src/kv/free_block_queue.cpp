#include "kv/free_block_queue.h"

#include "core/check.h"

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

void FreeBlockQueue::check_joinable(BlockId b) const {
  KAIRO_CHECK(b.value >= 0 && b.value < sentinel_, "free list: block %d is outside 0..%d", b.value, sentinel_ - 1);
  // Linking it again would cut the list and lose every block between its two positions.
  KAIRO_CHECK(!contains(b), "free list: block %d is already in the free list (freed twice)", b.value);
}

void FreeBlockQueue::push_back(BlockId b) {
  check_joinable(b);
  link_after(prev_[static_cast<size_t>(sentinel_)], b.value);
}

void FreeBlockQueue::push_front(BlockId b) {
  check_joinable(b);
  link_after(sentinel_, b.value);
}

BlockId FreeBlockQueue::pop_front() {
  KAIRO_CHECK(!empty(), "free list: pop from an empty free list");
  const int32_t head = next_[static_cast<size_t>(sentinel_)];
  unlink(head);  // the head of a non-empty list is linked: nothing more to check
  return BlockId{head};
}

void FreeBlockQueue::remove(BlockId b) {
  KAIRO_CHECK(b.value >= 0 && b.value < sentinel_ && contains(b), "free list: block %d is not in the free list",
              b.value);
  unlink(b.value);
}

void FreeBlockQueue::unlink(int32_t b) {
  const int32_t prev = prev_[static_cast<size_t>(b)], next = next_[static_cast<size_t>(b)];
  next_[static_cast<size_t>(prev)] = next;
  prev_[static_cast<size_t>(next)] = prev;
  prev_[static_cast<size_t>(b)] = kDetached;
  next_[static_cast<size_t>(b)] = kDetached;
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
