#include "core/bulk_memory.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

namespace kairo {
namespace {

TEST(BulkMemory, AllocationsAreAlignedDisjointAndWritable) {
  std::vector<std::shared_ptr<void>> blocks;
  std::vector<size_t> sizes = {1, 63, 64, 4096, 100000, size_t{3} << 20, 7};
  for (size_t n : sizes) {
    blocks.push_back(allocate_bulk(n));
    ASSERT_NE(blocks.back(), nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(blocks.back().get()) % 64, 0u) << n;
    std::memset(blocks.back().get(), static_cast<int>(n & 0xff), n);
  }
  // Each block still holds its own pattern: no two overlap.
  for (size_t i = 0; i < sizes.size(); ++i) {
    const auto* p = static_cast<const uint8_t*>(blocks[i].get());
    EXPECT_EQ(p[0], static_cast<uint8_t>(sizes[i] & 0xff));
    EXPECT_EQ(p[sizes[i] - 1], static_cast<uint8_t>(sizes[i] & 0xff));
  }
}

TEST(BulkMemory, BigAllocationsGetTheirOwnHugePageAlignedChunk) {
  auto big = allocate_bulk(size_t{40} << 20);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(big.get()) % (size_t{2} << 20), 0u);
  std::memset(big.get(), 1, size_t{40} << 20);
}

TEST(BulkMemory, MemoryOutlivesTheArenaRollingOver) {
  // A small block stays valid while later allocations fill its chunk and start new ones.
  auto first = allocate_bulk(128);
  std::memset(first.get(), 0x5a, 128);
  std::vector<std::shared_ptr<void>> more;
  for (int i = 0; i < 40; ++i) more.push_back(allocate_bulk(size_t{3} << 20));  // > one 64 MiB chunk
  more.clear();
  const auto* p = static_cast<const uint8_t*>(first.get());
  for (int i = 0; i < 128; ++i) ASSERT_EQ(p[i], 0x5a);
}

}  // namespace
}  // namespace kairo
