#include "core/bulk_memory.h"

#include <sys/mman.h>

#include <cstdint>
#include <mutex>

#include "core/out_of_memory.h"

namespace kairo {
namespace {

constexpr size_t kHugePage = size_t{2} << 20;
constexpr size_t kChunkBytes = size_t{64} << 20;

struct Chunk {
  void* base = nullptr;
  size_t size = 0;
  ~Chunk() { munmap(base, size); }
};

std::shared_ptr<Chunk> map_chunk(size_t bytes) {
  const size_t size = (bytes + kHugePage - 1) / kHugePage * kHugePage;
  // Over-map by one huge page so the chunk can start on a 2 MiB boundary, then give the slack back.
  void* raw = mmap(nullptr, size + kHugePage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) throw OutOfMemory(size, nullptr);  // what it is for, the caller's boundary says
  const auto start = reinterpret_cast<uintptr_t>(raw);
  const uintptr_t aligned = (start + kHugePage - 1) / kHugePage * kHugePage;
  if (aligned > start) munmap(raw, aligned - start);
  const uintptr_t end = start + size + kHugePage;
  if (end > aligned + size) munmap(reinterpret_cast<void*>(aligned + size), end - (aligned + size));
  auto* base = reinterpret_cast<void*>(aligned);
  madvise(base, size, MADV_HUGEPAGE);
  auto chunk = std::make_shared<Chunk>();
  chunk->base = base;
  chunk->size = size;
  return chunk;
}

struct Arena {
  std::mutex mutex;
  std::weak_ptr<Chunk> current;  // weak: a chunk whose allocations are all released is freed, not kept for reuse
  size_t used = 0;
};

Arena& arena() {
  static Arena a;
  return a;
}

}  // namespace

std::shared_ptr<void> allocate_bulk(size_t bytes) {
  bytes = (bytes + 63) / 64 * 64;
  if (bytes == 0) bytes = 64;
  Arena& a = arena();
  std::lock_guard<std::mutex> lock(a.mutex);
  std::shared_ptr<Chunk> chunk = a.current.lock();
  if (bytes >= kChunkBytes / 2) {  // big: a chunk of its own, the shared one stays as it is
    chunk = map_chunk(bytes);
    return std::shared_ptr<void>(chunk, chunk->base);
  }
  if (!chunk || a.used + bytes > chunk->size) {
    chunk = map_chunk(kChunkBytes);
    a.current = chunk;
    a.used = 0;
  }
  void* p = static_cast<uint8_t*>(chunk->base) + a.used;
  a.used += bytes;
  return std::shared_ptr<void>(chunk, p);  // aliasing: keeps the chunk alive, points into it
}

}  // namespace kairo
