#include "kv/block_hash.h"

#include <algorithm>
#include <cstring>

namespace kairo::kv {

namespace {

constexpr uint64_t fmix64(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  x ^= x >> 33;
  return x;
}

// Each step is a bijection of the state for a fixed word, so two inputs differing in one word always differ after
// that step; rotating the word index in keeps permutations of the same words apart.
struct Mixer {
  uint64_t state;
  uint64_t n_words = 0;
  void add(uint64_t word) {
    state = fmix64(state ^ (word + 0x9e3779b97f4a7c15ULL * ++n_words));
  }
};

}  // namespace

uint64_t hash_block_tokens(uint64_t parent_hash, std::span<const int32_t> tokens, std::string_view extra_keys) {
  Mixer m{fmix64(parent_hash)};
  size_t i = 0;
  for (; i + 1 < tokens.size(); i += 2) {
    m.add(static_cast<uint64_t>(static_cast<uint32_t>(tokens[i])) |
          (static_cast<uint64_t>(static_cast<uint32_t>(tokens[i + 1])) << 32));
  }
  if (i < tokens.size()) m.add(static_cast<uint32_t>(tokens[i]));
  // Lengths keep ([1,2], "x") and ([1], "2x")-style splits apart.
  m.add(tokens.size());
  for (size_t j = 0; j < extra_keys.size(); j += 8) {
    uint64_t w = 0;
    std::memcpy(&w, extra_keys.data() + j, std::min<size_t>(8, extra_keys.size() - j));
    m.add(w);
  }
  m.add(extra_keys.size());
  return m.state;
}

}  // namespace kairo::kv
