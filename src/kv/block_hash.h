#pragma once
// Prefix-cache keys. A full block's hash chains its parent's hash, its token ids and its extra keys (the cache
// salt for a request's first block), so equal hashes mean "same whole prefix" with high probability. Only with
// high probability: the pool verifies every hit against the stored tokens, extra keys and parent block (see
// block_pool.h), so a collision costs a cache miss, never wrong KV. That is also why the hash function is
// injectable: tests force collisions.
#include <cstdint>
#include <functional>
#include <span>
#include <string_view>

namespace kairo::kv {

using BlockHashFn = std::function<uint64_t(uint64_t parent_hash, std::span<const int32_t> tokens,
                                           std::string_view extra_keys)>;

// Parent hash of a request's first block.
inline constexpr uint64_t kRootBlockHash = 0x6b6169726f2d6b76ULL;  // "kairo-kv"

// Default 64-bit chained hash (murmur3-style finalizer per 64-bit word of input). Not cryptographic; hits are
// verified, so an adversarial collision can only make another tenant's prefix miss, not leak or corrupt it.
uint64_t hash_block_tokens(uint64_t parent_hash, std::span<const int32_t> tokens, std::string_view extra_keys);

}  // namespace kairo::kv
