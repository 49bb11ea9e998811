#include "engine/draft_model_proposer.h"

#include <algorithm>

namespace kairo::engine {

DraftModelProposer::DraftModelProposer(model::Model& draft, model::KvStorage storage, ThreadPool& pool)
    : draft_(draft),
      storage_(std::move(storage)),
      kv_(kv::KVCacheConfig{static_cast<int32_t>(storage_.n_blocks()), storage_.block_size(), false,
                            kv::hash_block_tokens}),
      pool_(pool),
      buffers_(draft.shared_device()) {}

void DraftModelProposer::propose(std::span<const int32_t> tokens, int n_prompt, int k, std::vector<int32_t>& out) {
  // One request alone, under an id no engine request has; its KV is let go at once.
  constexpr uint64_t kAlone = ~0ull;
  const ProposalSlot slot{kAlone, tokens, n_prompt, k, &out};
  propose_all(std::span(&slot, 1));
  release(kAlone);
}

void DraftModelProposer::release(uint64_t request) {
  kv_.free(request);
  seen_.erase(request);
}

void DraftModelProposer::propose_all(std::span<const ProposalSlot> slots) {
  // Reconcile: keep the draft KV of the longest common prefix with the request's tokens, roll back the rest.
  std::vector<Row> rows;
  for (const ProposalSlot& s : slots) {
    s.out->clear();
    if (s.q) s.q->clear();
    if (s.k <= 0 || s.tokens.empty()) continue;
    std::vector<int32_t>& seen = seen_[s.request];
    const size_t common = static_cast<size_t>(
        std::mismatch(seen.begin(), seen.end(), s.tokens.begin(), s.tokens.end()).first - seen.begin());
    // The last token is always fed again when everything matches: its logits give the first guess.
    const size_t keep = std::min(common, s.tokens.size() - 1);
    if (keep < seen.size()) {
      kv_.rollback(s.request, static_cast<int32_t>(keep));
      seen.resize(keep);
    }
    const int from = static_cast<int>(seen.size());
    int to = static_cast<int>(s.tokens.size());
    const bool catching_up = to - from > kMaxCatchUp;
    if (catching_up) to = from + kMaxCatchUp;
    if (!kv_.allocate_slots(s.request, s.tokens, to - from)) continue;  // the draft pool is full: no guesses
    seen.insert(seen.end(), s.tokens.begin() + from, s.tokens.begin() + to);
    rows.push_back({s.request, s.tokens, from, to, catching_up ? nullptr : s.out, &s});
  }
  if (rows.empty()) return;
  run(rows);

  // Then one token per request and step, fed back, until each has k guesses.
  for (int j = 1;; ++j) {
    std::vector<Row> next;
    for (size_t i = 0; i < slots.size(); ++i) {
      const ProposalSlot& s = slots[i];
      if (static_cast<int>(s.out->size()) != j || j >= s.k) continue;
      std::vector<int32_t>& seen = seen_[s.request];
      seen.push_back(s.out->back());
      if (!kv_.allocate_slots(s.request, seen, 1)) {
        seen.pop_back();
        continue;
      }
      const int at = static_cast<int>(seen.size()) - 1;
      next.push_back({s.request, seen, at, at + 1, s.out, &s});
    }
    if (next.empty()) return;
    run(next);
  }
}

void DraftModelProposer::run(const std::vector<Row>& rows) {
  batch_.clear();
  batch_.numerics = kernels::Numerics::Exact;  // the same guesses whatever else is in the step
  size_t max_blocks = 1;
  for (const Row& r : rows) max_blocks = std::max(max_blocks, kv_.block_table(r.request).size());
  batch_.max_blocks_per_seq = static_cast<int>(max_blocks);
  batch_.block_tables.assign(rows.size() * max_blocks, kv::kNullBlock.value);
  std::vector<const Row*> outs;
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    const auto& table = kv_.block_table(r.request);
    for (size_t b = 0; b < table.size(); ++b) batch_.block_tables[i * max_blocks + b] = table[b].value;
    for (int p = r.from; p < r.to; ++p) {
      batch_.token_ids.push_back(r.tokens[static_cast<size_t>(p)]);
      batch_.positions.push_back(p);
      batch_.seq_idx.push_back(static_cast<int32_t>(i));
      batch_.slot_mapping.push_back(kv_.slot(r.request, p));
    }
    if (r.out) {
      batch_.logits_rows.push_back(static_cast<int32_t>(batch_.token_ids.size() - 1));
      outs.push_back(&r);
    }
  }
  draft_.forward(batch_, storage_, buffers_, logits_, pool_);
  const size_t n_vocab = static_cast<size_t>(draft_.config().n_vocab);
  for (size_t i = 0; i < outs.size(); ++i) {
    const float* row = logits_.data() + i * n_vocab;
    const ProposalSlot& s = *outs[i]->slot;
    if (s.filters && s.rng && s.q) {
      sampling::SparseDistribution q = s.filters->distribution(row, static_cast<int32_t>(n_vocab));
      const int32_t guess = q.draw(sampling::uniform01(*s.rng));
      if (guess < 0) continue;  // nothing left to draw from: no more guesses for this request
      outs[i]->out->push_back(guess);
      s.q->push_back(std::move(q));
    } else {
      outs[i]->out->push_back(static_cast<int32_t>(std::max_element(row, row + n_vocab) - row));  // ties: lowest id
    }
  }
}

}  // namespace kairo::engine
