#include "engine/model_runner.h"

#include <algorithm>

namespace kairo::engine {

void ModelRunner::run(const StepPlan& plan) {
  for (const kv::BlockCopy& c : plan.copies)
    storage_.copy_block(c.src.value, c.dst.value, c.group == kv::KvGroup::Window);

  batch_.clear();
  batch_.numerics = kernels::Numerics::Relaxed;
  for (const ScheduledChunk& c : plan.chunks)
    if (c.seq->exact_numerics) batch_.numerics = kernels::Numerics::Exact;
  size_t max_blocks = 0;
  for (const ScheduledChunk& c : plan.chunks) max_blocks = std::max(max_blocks, kv_.block_table(c.seq->id).size());
  batch_.max_blocks_per_seq = static_cast<int>(std::max<size_t>(1, max_blocks));
  batch_.block_tables.assign(plan.chunks.size() * batch_.max_blocks_per_seq, kv::kNullBlock.value);
  const bool window_group = kv_.has_window_group();
  if (window_group) batch_.window_block_tables.assign(batch_.block_tables.size(), kv::kNullBlock.value);

  for (size_t s = 0; s < plan.chunks.size(); ++s) {
    const ScheduledChunk& c = plan.chunks[s];
    const auto& table = kv_.block_table(c.seq->id);
    for (size_t b = 0; b < table.size(); ++b) batch_.block_tables[s * batch_.max_blocks_per_seq + b] = table[b].value;
    if (window_group) {
      const auto& window_table = kv_.block_table(c.seq->id, kv::KvGroup::Window);
      for (size_t b = 0; b < window_table.size(); ++b)
        batch_.window_block_tables[s * batch_.max_blocks_per_seq + b] = window_table[b].value;
    }
    const int n_own = static_cast<int>(c.seq->tokens.size());
    for (int p = c.start; p < c.start + c.n_new; ++p) {
      batch_.token_ids.push_back(p < n_own ? c.seq->tokens[static_cast<size_t>(p)]
                                           : c.seq->draft[static_cast<size_t>(p - n_own)]);
      batch_.positions.push_back(p);
      batch_.seq_idx.push_back(static_cast<int32_t>(s));
      batch_.adapter_idx.push_back(c.seq->lora_index);
      batch_.slot_mapping.push_back(kv_.slot(c.seq->id, p));
      if (window_group) batch_.window_slot_mapping.push_back(kv_.slot(c.seq->id, p, kv::KvGroup::Window));
    }
    if (c.seq->embedding()) {
      const auto [first, last] = embedding_positions(c);
      const int32_t row0 = static_cast<int32_t>(batch_.token_ids.size()) - c.n_new - c.start;  // position 0's row
      for (int p = first; p < last; ++p) batch_.hidden_rows.push_back(row0 + p);
    } else if (c.needs_sample) {
      const int n_rows = 1 + c.n_draft;  // the last own token's prediction, then one after each proposed token
      for (int r = n_rows; r > 0; --r) batch_.logits_rows.push_back(static_cast<int32_t>(batch_.token_ids.size() - r));
    }
  }
  model_.forward(batch_, storage_, buffers_, logits_, pool_, &hidden_);
}

std::pair<int, int> ModelRunner::embedding_positions(const ScheduledChunk& c) {
  const Sequence& seq = *c.seq;
  const int end = c.start + c.n_new;
  switch (seq.request.embedding) {
    case EmbeddingPooling::Mean: return {std::max(c.start, seq.n_pooled), std::max(end, seq.n_pooled)};
    case EmbeddingPooling::Cls: return c.start == 0 && seq.n_pooled == 0 ? std::pair{0, 1} : std::pair{0, 0};
    case EmbeddingPooling::Last:
      return c.needs_sample ? std::pair{seq.n_prompt - 1, seq.n_prompt} : std::pair{0, 0};
    case EmbeddingPooling::None: break;
  }
  return {0, 0};
}

}  // namespace kairo::engine
