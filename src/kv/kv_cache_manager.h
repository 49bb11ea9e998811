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
// Sliding-window layers (KVCacheConfig::window): their K/V live in a second pool with block tables of their own,
// and the blocks that no later token of the request can read (wholly behind its window) are released at the
// request's next allocation, so a long sequence holds about window / block_size of them whatever its length. Prefix
// caching covers them too: a windowed block is published with the full-attention block of the same tokens as its
// anchor, and a hit of n blocks needs, in the windowed pool, only the blocks the next token's window reaches.
//
// Full blocks are published to the prefix cache when their slots are allocated, i.e. before the step that writes
// their KV runs. That is safe as long as a step's KV writes precede its attention reads at every layer, which is
// how the batched forward works; a runner failure must free the requests of that step.
//
// Every block reference is taken and dropped under the request's id, so the pool can tell when a request releases a
// block another request holds alone (block_pool.h); misuse of this interface (a fork into a live id, a rollback into
// published blocks) throws InvariantViolation (core/check.h) in every build.
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
  // The windowed layers' group, when both are > 0: a token at position p reads positions [p - window + 1, p] of
  // those layers, whose blocks come from a pool of n_window_blocks (null block included).
  int32_t window = 0;
  int32_t n_window_blocks = 0;
};

// The layers that share one block table: all of them, or the full-attention ones and the windowed ones apart.
enum class KvGroup : int32_t { Full = 0, Window = 1 };

// A cached prefix found for a token sequence.
struct PrefixHit {
  std::vector<BlockId> blocks;
  std::vector<uint64_t> hashes;  // chain hashes of those blocks
  // [blocks.size()] the windowed group's blocks (when it exists); null where the next token's window does not reach
  std::vector<BlockId> window_blocks;
  int32_t n_tokens = 0;          // blocks.size() * block_size
  std::string salt;              // the salt it was looked up with; becomes the request's salt
};

// The runner copies block src into dst (all layers) before the step's KV writes.
struct BlockCopy {
  BlockId src, dst;
  KvGroup group = KvGroup::Full;  // the layers whose block is copied
  bool operator==(const BlockCopy&) const = default;
};

struct SlotAllocation {
  std::vector<BlockId> new_blocks;  // appended to the block table, in order
  std::vector<BlockId> new_window_blocks;  // the same for the windowed group's table
  std::vector<BlockCopy> copies;    // copy-on-write instructions for this step
  int32_t n_cached_tokens = 0;      // tokens adopted from the prefix hit (first allocation only)
};

// Usable blocks the windowed group needs so that max_seqs sequences each hold what their window reaches (window
// positions, a partial block at each end and one copy-on-write) and a step's max_batch_tokens new tokens fit.
// Fewer only make the scheduler preempt sooner; more keep more windowed prefixes cached.
int64_t window_group_blocks(int window, int block_size, int max_seqs, int max_batch_tokens);

class KVCacheManager {
 public:
  explicit KVCacheManager(KVCacheConfig config);
  // The windowed pool points at the full one: the manager stays where it was made.
  KVCacheManager(const KVCacheManager&) = delete;
  KVCacheManager& operator=(const KVCacheManager&) = delete;

  // The longest verified cached prefix of tokens, in whole blocks, leaving at least the last token uncovered
  // (its logits must be computed). Counts tokens.size() queries and n_tokens hits. Changes no block state.
  PrefixHit get_computed_blocks(std::span<const int32_t> tokens, std::string_view salt = {});

  // Gives the request slots for tokens [n_tokens(id), n_tokens(id) + n_new_tokens) of `tokens` (its ids so far;
  // must cover them). On the request's first call, `hit` (if any) is adopted first and counts as already
  // computed. Copy-on-write: writing into a partially filled last block shared with a fork moves this request
  // to a private copy. nullopt, with nothing changed, when a pool lacks the blocks (except that windowed blocks
  // behind the window, which no later token reads, are released either way).
  //
  // Speculative decoding: the last n_lookahead of the new slots hold proposed tokens that may be rejected. `tokens`
  // then covers only the committed ones (it may end n_lookahead short of the new end), and no block holding a
  // lookahead slot is published to the prefix cache until its tokens are committed (by a later allocation), so
  // rollback() never takes back KV that another request may have adopted.
  std::optional<SlotAllocation> allocate_slots(RequestId id, std::span<const int32_t> tokens, int32_t n_new_tokens,
                                               const PrefixHit* hit = nullptr, int32_t n_lookahead = 0);

  // Gives back the request's slots from position n_tokens on (rejected proposals): blocks wholly past it return
  // to the pool. n_tokens must not cut into a published block, which allocate_slots guarantees for lookahead slots.
  void rollback(RequestId id, int32_t n_tokens);

  // n > 1: child starts as parent's exact state, sharing every block (ref counts +1). child must be new.
  void fork(RequestId parent, RequestId child);

  // Releases every block of the request (unknown ids are ignored): finish, abort and preemption all end here.
  void free(RequestId id);
  // Throws InvariantViolation unless each pool's free and referenced blocks add up to its size. O(1): the scheduler
  // runs it after every step.
  void check_accounting() const;

  bool has_request(RequestId id) const { return requests_.count(id) != 0; }
  // Empty for an unknown request. The windowed group's table holds the null block behind the window.
  const std::vector<BlockId>& block_table(RequestId id, KvGroup group = KvGroup::Full) const;
  int32_t n_tokens(RequestId id) const;
  // KV slot of token `position` of the request (position < n_tokens(id)) in the group's pool.
  int64_t slot(RequestId id, int32_t position, KvGroup group = KvGroup::Full) const;

  int32_t block_size() const { return pool_.block_size(); }
  double usage() const { return pool_.usage(); }
  const BlockPool& pool() const { return pool_; }
  bool has_window_group() const { return window_pool_.has_value(); }
  // The windowed group's pool (has_window_group() only).
  const BlockPool& window_pool() const { return *window_pool_; }
  // The first block a token at `position` reads in the windowed group.
  int32_t first_window_block(int32_t position) const;
  int64_t prefix_cache_queries() const { return n_queries_; }  // tokens looked up
  int64_t prefix_cache_hits() const { return n_hits_; }        // tokens found

 private:
  struct RequestState {
    std::vector<BlockId> blocks;
    std::vector<BlockId> window_blocks;  // the windowed group's table; [0, n_window_released) are null
    int32_t n_window_released = 0;
    std::vector<uint64_t> hashes;  // chain hashes of the full blocks seen so far (published or not)
    int32_t n_tokens = 0;
    std::string salt;
    bool publish = true;  // false once a block could not be published: its descendants are unreachable
  };

  uint64_t block_hash(uint64_t parent, std::span<const int32_t> tokens, size_t block_idx,
                      std::string_view salt) const;
  // Hashes and publishes the request's blocks that are full within its first n_committed tokens.
  void publish_full_blocks(RequestState& r, std::span<const int32_t> tokens, int32_t n_committed);
  // How many of the hit's first n_blocks are still cached as found, in both groups.
  size_t verified_hit_blocks(const PrefixHit& hit, std::span<const int32_t> tokens) const;
  // Whether the windowed blocks a hit of n blocks needs, window_blocks[first_window_block(n * bs) .. n), are the
  // cached windowed blocks of those tokens.
  bool window_hit_ok(const PrefixHit& hit, std::span<const int32_t> tokens, size_t n) const;
  std::optional<BlockId> lookup_window(const PrefixHit& hit, std::span<const int32_t> tokens, size_t i) const;
  // Releases the windowed blocks wholly behind the window of a token at position `start`.
  void release_behind_window(RequestState& r, RequestId id, int32_t start);
  std::string_view extra_keys(const std::string& salt, size_t block_idx) const {
    return block_idx == 0 ? std::string_view(salt) : std::string_view{};
  }

  KVCacheConfig config_;
  BlockPool pool_;
  std::optional<BlockPool> window_pool_;
  std::unordered_map<RequestId, RequestState> requests_;
  int64_t n_queries_ = 0, n_hits_ = 0;
};

}  // namespace kairo::kv
