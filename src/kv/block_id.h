#pragma once
// Strong id of one KV block: an index into every layer's K/V block arrays. Block 0 is the null block, never handed
// out, so a zero-initialised block-table entry can never alias real KV.
#include <compare>
#include <cstddef>
#include <cstdint>
#include <functional>

namespace kairo::kv {

struct BlockId {
  int32_t value = 0;
  constexpr BlockId() = default;
  constexpr explicit BlockId(int32_t v) : value(v) {}
  constexpr auto operator<=>(const BlockId&) const = default;
};

inline constexpr BlockId kNullBlock{0};

// Flat KV slot of a token: where the runner writes its K/V ([n_blocks * block_size] view of a layer's cache).
inline constexpr int64_t slot_index(BlockId block, int32_t offset, int32_t block_size) {
  return static_cast<int64_t>(block.value) * block_size + offset;
}

}  // namespace kairo::kv

template <>
struct std::hash<kairo::kv::BlockId> {
  size_t operator()(kairo::kv::BlockId b) const noexcept { return std::hash<int32_t>{}(b.value); }
};
