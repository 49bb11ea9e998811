#include "kv/kv_cache_manager.h"

#include <cassert>

namespace kairo::kv {

namespace {

int32_t cdiv(int32_t a, int32_t b) { return (a + b - 1) / b; }

const std::vector<BlockId> kNoBlocks;

}  // namespace

KVCacheManager::KVCacheManager(KVCacheConfig config)
    : config_(std::move(config)), pool_(config_.n_blocks, config_.block_size) {}

uint64_t KVCacheManager::block_hash(uint64_t parent, std::span<const int32_t> tokens, size_t block_idx,
                                    std::string_view salt) const {
  const size_t bs = static_cast<size_t>(block_size());
  // The salt keys the first block only; every later hash inherits it through the chain.
  return config_.hash_fn(parent, tokens.subspan(block_idx * bs, bs), block_idx == 0 ? salt : std::string_view{});
}

PrefixHit KVCacheManager::get_computed_blocks(std::span<const int32_t> tokens, std::string_view salt) {
  PrefixHit hit;
  hit.salt.assign(salt);
  if (!config_.enable_prefix_caching || tokens.empty()) return hit;
  n_queries_ += static_cast<int64_t>(tokens.size());
  const size_t bs = static_cast<size_t>(block_size());
  const size_t max_blocks = (tokens.size() - 1) / bs;  // the last token is always computed
  uint64_t parent_hash = kRootBlockHash;
  BlockId parent = kNullBlock;
  for (size_t i = 0; i < max_blocks; ++i) {
    const uint64_t h = block_hash(parent_hash, tokens, i, salt);
    const auto b = pool_.lookup(h, parent, tokens.subspan(i * bs, bs), i == 0 ? salt : std::string_view{});
    if (!b) break;
    hit.blocks.push_back(*b);
    hit.hashes.push_back(h);
    parent_hash = h;
    parent = *b;
  }
  hit.n_tokens = static_cast<int32_t>(hit.blocks.size() * bs);
  n_hits_ += hit.n_tokens;
  return hit;
}

std::optional<SlotAllocation> KVCacheManager::allocate_slots(RequestId id, std::span<const int32_t> tokens,
                                                             int32_t n_new_tokens, const PrefixHit* hit) {
  assert(n_new_tokens >= 0);
  const int32_t bs = block_size();
  auto it = requests_.find(id);
  const bool is_new = it == requests_.end();
  const RequestState empty;
  const RequestState& cur = is_new ? empty : it->second;

  // Adopt only the prefix of the hit that is still cached exactly as found.
  size_t n_hit_blocks = 0;
  int32_t n_hit_evictable = 0;
  if (is_new && hit != nullptr) {
    BlockId parent = kNullBlock;
    for (; n_hit_blocks < hit->blocks.size(); ++n_hit_blocks) {
      const size_t i = n_hit_blocks;
      if ((i + 1) * static_cast<size_t>(bs) > tokens.size()) break;
      const auto b = pool_.lookup(hit->hashes[i], parent, tokens.subspan(i * bs, bs),
                                  i == 0 ? std::string_view(hit->salt) : std::string_view{});
      if (!b || *b != hit->blocks[i]) break;
      n_hit_evictable += pool_.ref_count(*b) == 0;
      parent = *b;
    }
  }
  const int32_t start = cur.n_tokens + static_cast<int32_t>(n_hit_blocks) * bs;
  const int32_t end = start + n_new_tokens;
  assert(static_cast<size_t>(end) <= tokens.size());
  const int32_t n_have = static_cast<int32_t>(cur.blocks.size() + n_hit_blocks);
  const int32_t n_needed = std::max(0, cdiv(end, bs) - n_have);
  const bool cow = n_new_tokens > 0 && start % bs != 0 && pool_.ref_count(cur.blocks.back()) > 1;
  // Reviving a hit block takes it off the free list, so it cannot also be handed out as a new block.
  if (n_needed + (cow ? 1 : 0) > pool_.n_free() - n_hit_evictable) return std::nullopt;

  RequestState& r = is_new ? requests_[id] : it->second;
  SlotAllocation out;
  if (is_new && hit != nullptr) {
    r.salt = hit->salt;
    for (size_t i = 0; i < n_hit_blocks; ++i) {
      pool_.touch(hit->blocks[i]);
      r.blocks.push_back(hit->blocks[i]);
      r.hashes.push_back(hit->hashes[i]);
    }
    r.n_tokens = start;
    out.n_cached_tokens = start;
  }
  if (cow) {
    const BlockId shared = r.blocks.back();
    const BlockId copy = (*pool_.allocate(1))[0];
    pool_.release(std::span(&shared, 1));  // still referenced by the fork, so it stays out of the free list
    r.blocks.back() = copy;
    out.copies.push_back(BlockCopy{shared, copy});
  }
  out.new_blocks = *pool_.allocate(n_needed);
  r.blocks.insert(r.blocks.end(), out.new_blocks.begin(), out.new_blocks.end());
  r.n_tokens = end;
  if (config_.enable_prefix_caching) publish_full_blocks(r, tokens);
  return out;
}

void KVCacheManager::publish_full_blocks(RequestState& r, std::span<const int32_t> tokens) {
  const size_t bs = static_cast<size_t>(block_size());
  const size_t n_full = static_cast<size_t>(r.n_tokens) / bs;
  for (size_t i = r.hashes.size(); i < n_full; ++i) {
    const uint64_t parent_hash = i == 0 ? kRootBlockHash : r.hashes[i - 1];
    const uint64_t h = block_hash(parent_hash, tokens, i, r.salt);
    r.hashes.push_back(h);
    if (!r.publish) continue;
    const BlockId parent = i == 0 ? kNullBlock : r.blocks[i - 1];
    r.publish = pool_.register_block(r.blocks[i], h, parent, tokens.subspan(i * bs, bs),
                                     i == 0 ? std::string_view(r.salt) : std::string_view{});
  }
}

void KVCacheManager::fork(RequestId parent, RequestId child) {
  const auto it = requests_.find(parent);
  assert(it != requests_.end() && !has_request(child));
  RequestState copy = it->second;
  for (const BlockId b : copy.blocks) pool_.touch(b);
  requests_.emplace(child, std::move(copy));
}

void KVCacheManager::free(RequestId id) {
  const auto it = requests_.find(id);
  if (it == requests_.end()) return;
  // Last block first: the deepest blocks of a prefix are the least shareable, so they should be evicted first.
  std::vector<BlockId> reversed(it->second.blocks.rbegin(), it->second.blocks.rend());
  pool_.release(reversed);
  requests_.erase(it);
}

const std::vector<BlockId>& KVCacheManager::block_table(RequestId id) const {
  const auto it = requests_.find(id);
  return it == requests_.end() ? kNoBlocks : it->second.blocks;
}

int32_t KVCacheManager::n_tokens(RequestId id) const {
  const auto it = requests_.find(id);
  return it == requests_.end() ? 0 : it->second.n_tokens;
}

int64_t KVCacheManager::slot(RequestId id, int32_t position) const {
  const auto& blocks = block_table(id);
  const int32_t bs = block_size();
  assert(position >= 0 && static_cast<size_t>(position / bs) < blocks.size());
  return slot_index(blocks[static_cast<size_t>(position / bs)], position % bs, bs);
}

}  // namespace kairo::kv
