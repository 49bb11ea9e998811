#pragma once
#include <initializer_list>
#include <numeric>
#include <ostream>
#include <vector>

#include "kv/block_id.h"
#include "kv/kv_cache_manager.h"

namespace kairo::kv {

inline void PrintTo(BlockId b, std::ostream* os) { *os << "B" << b.value; }
inline void PrintTo(const BlockCopy& c, std::ostream* os) { *os << "copy B" << c.src.value << "->B" << c.dst.value; }

namespace testing {

inline std::vector<BlockId> ids(std::initializer_list<int32_t> values) {
  std::vector<BlockId> out;
  for (int32_t v : values) out.emplace_back(v);
  return out;
}

// Tokens first, first + 1, ... (n of them).
inline std::vector<int32_t> seq(int32_t first, int32_t n) {
  std::vector<int32_t> out(static_cast<size_t>(n));
  std::iota(out.begin(), out.end(), first);
  return out;
}

// A manager with blocks of block_size tokens, prefix caching on unless caching is false.
inline KVCacheManager make_manager(int32_t n_blocks, int32_t block_size, bool caching = true) {
  return KVCacheManager(KVCacheConfig{n_blocks, block_size, caching, hash_block_tokens});
}

inline std::vector<int32_t> concat(std::vector<int32_t> a, const std::vector<int32_t>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

}  // namespace testing
}  // namespace kairo::kv
