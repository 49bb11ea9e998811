#pragma once
// Per-request KV bookkeeping over a BlockPool (vLLM's KVCacheManager shape): block tables, prefix-cache lookups,
// slot allocation with copy-on-write, forks for n > 1, and freeing. Plain data in, plain data out; running out of
// blocks is a value (nullopt) that tells the scheduler to preempt.
//
// Call pattern for one request:
//   hit = get_computed_blocks(prompt, salt);          // cached prefix (never the last token)
//   alloc = allocate_slots(id, prompt, n, &hit);       // first call adopts the hit; alloc->n_cached_tokens
//   ... each step: allocate_slots(id, all_tokens, n_new) for the tokens fed to the model this step ...
//   free(id);                                          // finish, abort or preempt
// Between get_computed_blocks and the first allocate_slots nothing else may allocate from the pool; if something
// did, the evicted tail of the hit is dropped and n_cached_tokens says how much was really adopted.
//
// Full blocks are published to the prefix cache when their slots are allocated, i.e. before the step that writes
// their KV runs. That is safe as long as a step's KV writes precede its attention reads at every layer, which is
// how the batched forward works; a runner failure must free the requests of that step.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "kv/block_hash.h"
#include "kv/block_id.h"
#include "kv/block_pool.h"

namespace kairo::kv {

using RequestId = uint64_t;

struct KVCacheConfig {
  int32_t n_blocks = 0;   // including the null block
  int32_t block_size = 16;
  bool enable_prefix_caching = true;
  BlockHashFn hash_fn = hash_block_tokens;
};

// A cached prefix found for a token sequence.
struct PrefixHit {
  std::vector<BlockId> blocks;
  std::vector<uint64_t> hashes;  // chain hashes of those blocks
  int32_t n_tokens = 0;          // blocks.size() * block_size
  std::string salt;              // the salt it was looked up with; becomes the request's salt
};

// The runner copies block src into dst (all layers) before the step's KV writes.
struct BlockCopy {
  BlockId src, dst;
  bool operator==(const BlockCopy&) const = default;
};

struct SlotAllocation {
  std::vector<BlockId> new_blocks;  // appended to the block table, in order
  std::vector<BlockCopy> copies;    // copy-on-write instructions for this step
  int32_t n_cached_tokens = 0;      // tokens adopted from the prefix hit (first allocation only)
};

class KVCacheManager {
 public:
  explicit KVCacheManager(KVCacheConfig config);

  // The longest verified cached prefix of tokens, in whole blocks, leaving at least the last token uncovered
  // (its logits must be computed). Counts tokens.size() queries and n_tokens hits. Changes no block state.
  PrefixHit get_computed_blocks(std::span<const int32_t> tokens, std::string_view salt = {});

  // Gives the request slots for tokens [n_tokens(id), n_tokens(id) + n_new_tokens) of `tokens` (its ids so far;
  // must cover them). On the request's first call, `hit` (if any) is adopted first and counts as already
  // computed. Copy-on-write: writing into a partially filled last block shared with a fork moves this request
  // to a private copy. nullopt, with nothing changed, when the pool lacks the blocks.
  std::optional<SlotAllocation> allocate_slots(RequestId id, std::span<const int32_t> tokens, int32_t n_new_tokens,
                                               const PrefixHit* hit = nullptr);

  // n > 1: child starts as parent's exact state, sharing every block (ref counts +1). child must be new.
  void fork(RequestId parent, RequestId child);

  // Releases every block of the request (unknown ids are ignored): finish, abort and preemption all end here.
  void free(RequestId id);

  bool has_request(RequestId id) const { return requests_.count(id) != 0; }
  // Empty for an unknown request.
  const std::vector<BlockId>& block_table(RequestId id) const;
  int32_t n_tokens(RequestId id) const;
  // KV slot of token `position` of the request (position < n_tokens(id)).
  int64_t slot(RequestId id, int32_t position) const;

  int32_t block_size() const { return pool_.block_size(); }
  double usage() const { return pool_.usage(); }
  const BlockPool& pool() const { return pool_; }
  int64_t prefix_cache_queries() const { return n_queries_; }  // tokens looked up
  int64_t prefix_cache_hits() const { return n_hits_; }        // tokens found

 private:
  struct RequestState {
    std::vector<BlockId> blocks;
    std::vector<uint64_t> hashes;  // chain hashes of the full blocks seen so far (published or not)
    int32_t n_tokens = 0;
    std::string salt;
    bool publish = true;  // false once a block could not be published: its descendants are unreachable
  };

  uint64_t block_hash(uint64_t parent, std::span<const int32_t> tokens, size_t block_idx,
                      std::string_view salt) const;
  // Hashes and publishes the request's blocks that are full within its first n_tokens.
  void publish_full_blocks(RequestState& r, std::span<const int32_t> tokens);

  KVCacheConfig config_;
  BlockPool pool_;
  std::unordered_map<RequestId, RequestState> requests_;
  int64_t n_queries_ = 0, n_hits_ = 0;
};

}  // namespace kairo::kv
