#include "kv/kv_cache_manager.h"

#include <algorithm>

#include "core/check.h"

namespace kairo::kv {

namespace {

int32_t cdiv(int32_t a, int32_t b) { return (a + b - 1) / b; }

const std::vector<BlockId> kNoBlocks;

// n blocks that the capacity check before it guaranteed: a shortfall means the pool's counts are wrong.
std::vector<BlockId> take(BlockPool& pool, int32_t n, RequestId id) {
  auto blocks = pool.allocate(n, id);
  KAIRO_CHECK(blocks.has_value(),
              "kv cache: request %llu needs %d blocks that the capacity check found, but %d are free",
              static_cast<unsigned long long>(id), n, pool.n_free());
  return std::move(*blocks);
}

}  // namespace

int64_t window_group_blocks(int window, int block_size, int max_seqs, int max_batch_tokens) {
  return static_cast<int64_t>(max_seqs) * (cdiv(window, block_size) + 3) + cdiv(max_batch_tokens, block_size);
}

KVCacheManager::KVCacheManager(KVCacheConfig config)
    : config_(std::move(config)), pool_(config_.n_blocks, config_.block_size) {
  if (config_.window > 0 && config_.n_window_blocks > 0)
    window_pool_.emplace(config_.n_window_blocks, config_.block_size, &pool_);
}

int32_t KVCacheManager::first_window_block(int32_t position) const {
  return std::max(0, position - config_.window + 1) / block_size();
}

std::optional<BlockId> KVCacheManager::lookup_window(const PrefixHit& hit, std::span<const int32_t> tokens,
                                                     size_t i) const {
  const size_t bs = static_cast<size_t>(block_size());
  return window_pool_->lookup(hit.hashes[i], hit.blocks[i], tokens.subspan(i * bs, bs), extra_keys(hit.salt, i));
}

bool KVCacheManager::window_hit_ok(const PrefixHit& hit, std::span<const int32_t> tokens, size_t n) const {
  const size_t bs = static_cast<size_t>(block_size());
  for (size_t i = static_cast<size_t>(first_window_block(static_cast<int32_t>(n * bs))); i < n; ++i) {
    if (i >= hit.window_blocks.size() || hit.window_blocks[i] == kNullBlock) return false;
    const auto b = lookup_window(hit, tokens, i);
    if (!b || *b != hit.window_blocks[i]) return false;
  }
  return true;
}

void KVCacheManager::release_behind_window(RequestState& r, RequestId id, int32_t start) {
  if (!has_window_group()) return;
  const int32_t end = std::min<int32_t>(first_window_block(start), static_cast<int32_t>(r.window_blocks.size()));
  for (; r.n_window_released < end; ++r.n_window_released) {
    BlockId& b = r.window_blocks[static_cast<size_t>(r.n_window_released)];
    if (b == kNullBlock) continue;  // never adopted (a prefix hit starts at its window)
    window_pool_->release(std::span(&b, 1), id);
    b = kNullBlock;
  }
}
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
  if (has_window_group()) {
    // The windowed group's copies of those blocks, then the longest hit whose window they cover.
    for (size_t i = 0; i < hit.blocks.size(); ++i) hit.window_blocks.push_back(lookup_window(hit, tokens, i).value_or(kNullBlock));
    size_t n = hit.blocks.size();
    while (n > 0 && !window_hit_ok(hit, tokens, n)) --n;
    hit.blocks.resize(n);
    hit.hashes.resize(n);
    hit.window_blocks.resize(n);
    const size_t first = static_cast<size_t>(first_window_block(static_cast<int32_t>(n * bs)));
    std::fill(hit.window_blocks.begin(), hit.window_blocks.begin() + static_cast<std::ptrdiff_t>(first), kNullBlock);
  }
  hit.n_tokens = static_cast<int32_t>(hit.blocks.size() * bs);
  n_hits_ += hit.n_tokens;
  return hit;
}

size_t KVCacheManager::verified_hit_blocks(const PrefixHit& hit, std::span<const int32_t> tokens) const {
  const size_t bs = static_cast<size_t>(block_size());
  size_t n = 0;
  BlockId parent = kNullBlock;
  for (; n < hit.blocks.size(); ++n) {
    if ((n + 1) * bs > tokens.size()) break;
    const auto b = pool_.lookup(hit.hashes[n], parent, tokens.subspan(n * bs, bs), extra_keys(hit.salt, n));
    if (!b || *b != hit.blocks[n]) break;
    parent = *b;
  }
  if (has_window_group()) {
    while (n > 0 && !window_hit_ok(hit, tokens, n)) --n;
  }
  return n;
}

std::optional<SlotAllocation> KVCacheManager::allocate_slots(RequestId id, std::span<const int32_t> tokens,
                                                             int32_t n_new_tokens, const PrefixHit* hit,
                                                             int32_t n_lookahead) {
  KAIRO_CHECK(n_new_tokens >= 0 && n_lookahead >= 0 && n_lookahead <= n_new_tokens,
              "kv cache: request %llu asks for %d new slots of which %d lookahead", static_cast<unsigned long long>(id),
              n_new_tokens, n_lookahead);
  const int32_t bs = block_size();
  auto it = requests_.find(id);
  const bool is_new = it == requests_.end();
  if (!is_new) release_behind_window(it->second, id, it->second.n_tokens);
  const RequestState empty;
  const RequestState& cur = is_new ? empty : it->second;

  // Adopt only the prefix of the hit that is still cached exactly as found.
  const size_t n_hit_blocks = is_new && hit != nullptr ? verified_hit_blocks(*hit, tokens) : 0;
  const int32_t start = cur.n_tokens + static_cast<int32_t>(n_hit_blocks) * bs;
  const size_t first_window = has_window_group() ? static_cast<size_t>(first_window_block(start)) : 0;
  // Reviving a hit block takes it off the free list, so it cannot also be handed out as a new block.
  int32_t n_hit_evictable = 0, n_hit_window_evictable = 0;
  for (size_t i = 0; i < n_hit_blocks; ++i) {
    n_hit_evictable += pool_.ref_count(hit->blocks[i]) == 0;
    if (has_window_group() && i >= first_window) n_hit_window_evictable += window_pool_->ref_count(hit->window_blocks[i]) == 0;
  }
  const int32_t end = start + n_new_tokens;
  KAIRO_CHECK(static_cast<size_t>(end - n_lookahead) <= tokens.size(),
              "kv cache: request %llu commits %d tokens but gives %zu", static_cast<unsigned long long>(id),
              end - n_lookahead, tokens.size());
  const int32_t n_have = static_cast<int32_t>(cur.blocks.size() + n_hit_blocks);
  const int32_t n_needed = std::max(0, cdiv(end, bs) - n_have);
  const bool writes_into_last = n_new_tokens > 0 && start % bs != 0;
  const bool cow = writes_into_last && pool_.ref_count(cur.blocks.back()) > 1;
  const bool window_cow = writes_into_last && has_window_group() && window_pool_->ref_count(cur.window_blocks.back()) > 1;
  if (n_needed + (cow ? 1 : 0) > pool_.n_free() - n_hit_evictable) return std::nullopt;
  if (has_window_group() && n_needed + (window_cow ? 1 : 0) > window_pool_->n_free() - n_hit_window_evictable) {
    return std::nullopt;
  }

  RequestState& r = is_new ? requests_[id] : it->second;
  SlotAllocation out;
  if (is_new && hit != nullptr) {
    r.salt = hit->salt;
    for (size_t i = 0; i < n_hit_blocks; ++i) {
      pool_.touch(hit->blocks[i], id);
      r.blocks.push_back(hit->blocks[i]);
      r.hashes.push_back(hit->hashes[i]);
      if (!has_window_group()) continue;
      const BlockId w = i >= first_window ? hit->window_blocks[i] : kNullBlock;
      if (w != kNullBlock) window_pool_->touch(w, id);
      r.window_blocks.push_back(w);
    }
    r.n_window_released = static_cast<int32_t>(std::min(first_window, n_hit_blocks));
    r.n_tokens = start;
    out.n_cached_tokens = start;
  }
  auto copy_last = [&](BlockPool& pool, std::vector<BlockId>& table, KvGroup group) {
    const BlockId shared = table.back();
    const BlockId copy = take(pool, 1, id)[0];
    pool.release(std::span(&shared, 1), id);  // still referenced by the fork, so it stays out of the free list
    table.back() = copy;
    out.copies.push_back(BlockCopy{shared, copy, group});
  };
  if (cow) copy_last(pool_, r.blocks, KvGroup::Full);
  if (window_cow) copy_last(*window_pool_, r.window_blocks, KvGroup::Window);
  out.new_blocks = take(pool_, n_needed, id);
  r.blocks.insert(r.blocks.end(), out.new_blocks.begin(), out.new_blocks.end());
  if (has_window_group()) {
    out.new_window_blocks = take(*window_pool_, n_needed, id);
    r.window_blocks.insert(r.window_blocks.end(), out.new_window_blocks.begin(), out.new_window_blocks.end());
  }
  r.n_tokens = end;
  if (config_.enable_prefix_caching) publish_full_blocks(r, tokens, end - n_lookahead);
  return out;
}

void KVCacheManager::rollback(RequestId id, int32_t n_tokens) {
  const auto it = requests_.find(id);
  if (it == requests_.end()) return;
  RequestState& r = it->second;
  KAIRO_CHECK(n_tokens >= 0 && n_tokens <= r.n_tokens, "kv cache: request %llu rolls back to %d of its %d tokens",
              static_cast<unsigned long long>(id), n_tokens, r.n_tokens);
  // Published blocks may already serve other requests: their KV must never be taken back.
  KAIRO_CHECK(r.hashes.size() * static_cast<size_t>(block_size()) <= static_cast<size_t>(n_tokens),
              "kv cache: request %llu rolls back to %d tokens, into its %zu hashed blocks",
              static_cast<unsigned long long>(id), n_tokens, r.hashes.size());
  const size_t keep = static_cast<size_t>(cdiv(n_tokens, block_size()));
  // Last block first, as free() does.
  for (size_t i = r.blocks.size(); i > keep; --i) pool_.release(std::span(&r.blocks[i - 1], 1), id);
  r.blocks.resize(std::min(keep, r.blocks.size()));
  if (has_window_group()) {
    for (size_t i = r.window_blocks.size(); i > keep; --i)
      if (r.window_blocks[i - 1] != kNullBlock) window_pool_->release(std::span(&r.window_blocks[i - 1], 1), id);
    r.window_blocks.resize(std::min(keep, r.window_blocks.size()));
    r.n_window_released = std::min(r.n_window_released, static_cast<int32_t>(r.window_blocks.size()));
  }
  r.n_tokens = n_tokens;
}

void KVCacheManager::publish_full_blocks(RequestState& r, std::span<const int32_t> tokens, int32_t n_committed) {
  const size_t bs = static_cast<size_t>(block_size());
  const size_t n_full = static_cast<size_t>(n_committed) / bs;
  for (size_t i = r.hashes.size(); i < n_full; ++i) {
    const uint64_t parent_hash = i == 0 ? kRootBlockHash : r.hashes[i - 1];
    const uint64_t h = block_hash(parent_hash, tokens, i, r.salt);
    r.hashes.push_back(h);
    if (!r.publish) continue;
    const BlockId parent = i == 0 ? kNullBlock : r.blocks[i - 1];
    r.publish = pool_.register_block(r.blocks[i], h, parent, tokens.subspan(i * bs, bs), extra_keys(r.salt, i));
    // The windowed copy, anchored to the block just published (a refusal only leaves it uncached: hits stop short).
    if (r.publish && has_window_group() && r.window_blocks[i] != kNullBlock) {
      window_pool_->register_block(r.window_blocks[i], h, r.blocks[i], tokens.subspan(i * bs, bs),
                                   extra_keys(r.salt, i));
    }
  }
}

void KVCacheManager::fork(RequestId parent, RequestId child) {
  const auto it = requests_.find(parent);
  KAIRO_CHECK(it != requests_.end() && !has_request(child),
              "kv cache: fork of request %llu (%s) into request %llu (%s)", static_cast<unsigned long long>(parent),
              it != requests_.end() ? "known" : "unknown", static_cast<unsigned long long>(child),
              has_request(child) ? "already holding KV" : "new");
  RequestState copy = it->second;
  for (const BlockId b : copy.blocks) pool_.touch(b, child);
  for (const BlockId b : copy.window_blocks)
    if (b != kNullBlock) window_pool_->touch(b, child);
  requests_.emplace(child, std::move(copy));
}

void KVCacheManager::free(RequestId id) {
  const auto it = requests_.find(id);
  if (it == requests_.end()) return;
  // Last block first: the deepest blocks of a prefix are the least shareable, so they should be evicted first.
  std::vector<BlockId> reversed(it->second.blocks.rbegin(), it->second.blocks.rend());
  pool_.release(reversed, id);
  reversed.clear();
  for (auto b = it->second.window_blocks.rbegin(); b != it->second.window_blocks.rend(); ++b)
    if (*b != kNullBlock) reversed.push_back(*b);
  if (has_window_group()) window_pool_->release(reversed, id);
  requests_.erase(it);
}

void KVCacheManager::check_accounting() const {
  pool_.check_accounting();
  if (has_window_group()) window_pool_->check_accounting();
}

const std::vector<BlockId>& KVCacheManager::block_table(RequestId id, KvGroup group) const {
  const auto it = requests_.find(id);
  if (it == requests_.end()) return kNoBlocks;
  return group == KvGroup::Window ? it->second.window_blocks : it->second.blocks;
}

int32_t KVCacheManager::n_tokens(RequestId id) const {
  const auto it = requests_.find(id);
  return it == requests_.end() ? 0 : it->second.n_tokens;
}

int64_t KVCacheManager::slot(RequestId id, int32_t position, KvGroup group) const {
  const auto& blocks = block_table(id, group);
  const int32_t bs = block_size();
  // A slot outside the request's own blocks (past its table, or the null block) is another request's KV.
  KAIRO_CHECK(position >= 0 && static_cast<size_t>(position / bs) < blocks.size() &&
                  blocks[static_cast<size_t>(position / bs)] != kNullBlock,
              "kv cache: request %llu has no block of its own for position %d (%zu blocks in its %s table)",
              static_cast<unsigned long long>(id), position, blocks.size(),
              group == KvGroup::Window ? "windowed" : "full");
  return slot_index(blocks[static_cast<size_t>(position / bs)], position % bs, bs);
}

}  // namespace kairo::kv
