#include "kernels/cpu/scratch.h"

#include <cstdlib>

#include "core/out_of_memory.h"

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
    b.data = nullptr;
    b.capacity = 0;  // a failed growth leaves an empty buffer, never a stale capacity over freed memory
    // Grow geometrically so a slowly increasing shape (a growing KV length) doesn't reallocate every call.
    const size_t cap = align_up(bytes + bytes / 2, 4096);
    b.data = std::aligned_alloc(64, cap);
    if (b.data == nullptr) throw OutOfMemory(cap, "CPU kernel scratch");
    b.capacity = cap;
  }
  return b.data;
}

}  // namespace kairo::kernels::cpu
