#pragma once
// Owns every block's bookkeeping: reference counts, the LRU free list and the prefix-cache index. Deals only in
// ids; the KV tensors live with the model runner.
//
// Free list / eviction order (head is taken first by allocate()):
//  - a block whose ref count drops to 0 and that holds a cached (full, hashed) prefix goes to the TAIL, so it
//    stays a cache hit for as long as possible and cached blocks are evicted least-recently-freed first;
//  - a block with nothing cached goes to the HEAD: it has no reuse value, so it is handed out before any cached
//    block is evicted. (vLLM appends both to the tail; putting dead blocks first keeps more prefixes alive.)
//  - callers free a request's blocks last-to-first, so among one request's cached blocks the deepest (least
//    shareable) ones are evicted first.
//
// Cached-block verification: each cached block stores its tokens, extra keys and its parent (block id plus the
// parent's cache generation, a number never reused). lookup() accepts a block only if all three match, so by
// induction along the chain a hit means the whole prefix is identical, whatever the hash function does.
//
// An anchored pool (the sliding-window layers' blocks, anchored to the full-attention layers' pool) keeps no chain
// of its own: a block's "parent" is the anchor's block computed in the same step for the same tokens, checked
// against the anchor's generations. The anchor's chain proves the prefix, so a windowed block is found without its
// predecessors, which a windowed group frees as they fall behind the window.
//
// Invariants, checked in every build (core/check.h; each check is O(1) per block touched): a block is in the free
// list exactly when its ref count is 0; a ref count is never released below 0; a block handed out comes from the
// free list with ref count 0; the free and used counts add up to the pool. Ownership: every reference names its
// holder (the KV manager's request id), and a block with a single holder records it, so a request releasing a block
// that another request holds alone is caught when it happens. Once a block is shared (a fork, a prefix hit on a live
// block) its holders are not tracked, only counted: tracking them all would cost O(holders) per release.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "kv/block_id.h"
#include "kv/free_block_queue.h"

namespace kairo::kv {

// Who holds a reference to a block: the KV manager's request id.
using BlockHolder = uint64_t;

class BlockPool {
 public:
  // n_blocks includes the null block 0, so n_blocks - 1 are usable. Requires n_blocks >= 2, block_size >= 1.
  // anchor: see above (must outlive this pool); parents then name the anchor's blocks.
  BlockPool(int32_t n_blocks, int32_t block_size, const BlockPool* anchor = nullptr);
  BlockPool(const BlockPool&) = delete;
  BlockPool& operator=(const BlockPool&) = delete;

  int32_t n_blocks() const { return n_blocks_; }
  int32_t block_size() const { return block_size_; }
  // Blocks allocate() can hand out now: unreferenced ones, including cached blocks it would evict.
  int32_t n_free() const { return free_.size(); }
  // Fraction of usable blocks referenced by requests (cached-but-free blocks count as free).
  double usage() const;

  // n blocks from the head of the free list with ref count 1, held by holder, evicting any cached content; nullopt
  // (nothing changed) if fewer than n are free.
  std::optional<std::vector<BlockId>> allocate(int32_t n, BlockHolder holder);
  // Adds holder's reference; revives an unreferenced cached block out of the free list.
  void touch(BlockId b, BlockHolder holder);
  // Drops one of holder's references per block, in order; blocks reaching 0 join the free list as described above.
  // Throws InvariantViolation for a block with no reference left, or one that another holder holds alone.
  void release(std::span<const BlockId> blocks, BlockHolder holder);
  // Blocks referenced now (ref count > 0), counted apart from the free list so that the two can be checked against
  // each other.
  int32_t n_used() const { return n_used_; }
  // Throws InvariantViolation unless n_free() + n_used() covers every usable block. O(1).
  void check_accounting() const;

  int32_t ref_count(BlockId b) const { return ref_[idx(b)]; }
  bool is_cached(BlockId b) const { return gen_[idx(b)] != 0; }
  // The block's cache generation (0 when nothing is cached in it); never reused by another content.
  uint64_t generation(BlockId b) const { return gen_[idx(b)]; }
  bool is_free(BlockId b) const { return free_.contains(b); }
  std::vector<BlockId> free_list() const { return free_.to_vector(); }
  int32_t n_cached() const { return static_cast<int32_t>(by_hash_.size()); }

  // The verified cached block for (hash, parent, tokens, extra_keys), if any. parent is kNullBlock for a first
  // block; otherwise it must be the block the same lookup chain just returned.
  std::optional<BlockId> lookup(uint64_t hash, BlockId parent, std::span<const int32_t> tokens,
                                std::string_view extra_keys) const;
  // Publishes a full block (tokens.size() == block_size) under hash. Returns false, leaving b uncached, if the
  // hash already names a live cached block (a duplicate computed concurrently, or a collision): first one wins.
  bool register_block(BlockId b, uint64_t hash, BlockId parent, std::span<const int32_t> tokens,
                      std::string_view extra_keys);

 private:
  static size_t idx(BlockId b) { return static_cast<size_t>(b.value); }
  // holder_ of a block with more than one holder (or whose remaining holder is not known).
  static constexpr BlockHolder kShared = ~BlockHolder{0};
  // Throws unless b is a usable block of this pool (not the null block, in range): ref_[idx(b)] is safe after it.
  void check_usable(BlockId b, const char* what) const;
  // The parent link of a cached block is live while the parent still holds the generation it had.
  bool chain_live(BlockId b) const;
  void uncache(BlockId b);

  // Where parents live: this pool, or the anchor.
  const BlockPool& parents() const { return anchor_ ? *anchor_ : *this; }

  int32_t n_blocks_, block_size_;
  const BlockPool* anchor_;
  FreeBlockQueue free_;
  std::vector<int32_t> ref_;
  std::vector<BlockHolder> holder_;  // the single holder of a block with ref count 1, else kShared
  int32_t n_used_ = 0;
  // Cache metadata per block (meaningful while gen_ != 0).
  std::vector<uint64_t> gen_, hash_, parent_gen_;
  std::vector<BlockId> parent_;
  std::vector<int32_t> tokens_;  // [n_blocks, block_size]
  std::vector<std::string> extra_;
  std::unordered_map<uint64_t, BlockId> by_hash_;
  uint64_t next_gen_ = 1;
};

}  // namespace kairo::kv
