#include "kernels/cpu/scratch.h"

#include <cstdlib>
#include <new>

namespace kairo::kernels::cpu {
namespace {

struct Buffer {
  void* data = nullptr;
  size_t capacity = 0;
  ~Buffer() { std::free(data); }
};

}  // namespace

void* thread_scratch(ScratchSlot slot, size_t bytes) {
  thread_local Buffer buffers[static_cast<int>(ScratchSlot::Count)];
  Buffer& b = buffers[static_cast<int>(slot)];
  if (bytes > b.capacity) {
    std::free(b.data);
    // Grow geometrically so a slowly increasing shape (a growing KV length) doesn't reallocate every call.
    const size_t cap = align_up(bytes + bytes / 2, 4096);
    b.data = std::aligned_alloc(64, cap);
    if (b.data == nullptr) throw std::bad_alloc();
    b.capacity = cap;
  }
  return b.data;
}

}  // namespace kairo::kernels::cpu
