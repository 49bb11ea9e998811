#pragma once
// One forward step's input: the new tokens of every scheduled sequence, flattened. Plain data built by the engine
// (or the single-sequence generator); the model never sees scheduler objects.
#include <cstdint>
#include <vector>

#include "kernels/backend.h"

namespace kairo::model {

struct Batch {
  std::vector<int32_t> token_ids;     // [n_tokens]
  std::vector<int32_t> positions;     // [n_tokens] position of each token in its sequence
  std::vector<int32_t> seq_idx;       // [n_tokens] row of block_tables the token's sequence uses
  std::vector<int64_t> slot_mapping;  // [n_tokens] KV slot the token's K/V is written to
  std::vector<int32_t> block_tables;  // [n_seqs, max_blocks_per_seq] KV block ids, in sequence order
  int max_blocks_per_seq = 0;
  // The sliding-window layers' own block tables and slots (kv::KvGroup::Window), laid out like the two above; empty
  // when those layers share the tables above (KvStorage without a windowed group).
  std::vector<int64_t> window_slot_mapping;  // [n_tokens]
  std::vector<int32_t> window_block_tables;  // [n_seqs, max_blocks_per_seq]
  std::vector<int32_t> logits_rows;   // token indices whose logits are wanted, in output order
  // Token indices whose final hidden state (after the output norm) is wanted, in output order: what an embedding
  // request pools (model::Pooling).
  std::vector<int32_t> hidden_rows;
  // [n_tokens] the LoRA adapter each token's sequence uses (Model::add_adapter's index; 0 = the base model), or
  // empty when every token is the base's.
  std::vector<int32_t> adapter_idx;
  // Relaxed only when no sequence in the step needs the batch-invariance contract (kernels::Numerics).
  kernels::Numerics numerics = kernels::Numerics::Exact;

  int64_t n_tokens() const { return static_cast<int64_t>(token_ids.size()); }
  void clear() {
    token_ids.clear();
    positions.clear();
    seq_idx.clear();
    slot_mapping.clear();
    block_tables.clear();
    window_slot_mapping.clear();
    window_block_tables.clear();
    logits_rows.clear();
    hidden_rows.clear();
    adapter_idx.clear();
    max_blocks_per_seq = 0;
    numerics = kernels::Numerics::Exact;
  }
};

}  // namespace kairo::model
