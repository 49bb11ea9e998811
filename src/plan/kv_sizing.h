#pragma once
// Sizing the paged KV pool from a memory budget -- the one computation `kairo plan` and `kairo serve` share, so the
// server's capacity is what the planner predicted, and a configuration that cannot fit is refused with a message
// that names the knob to turn and the value that would fit.
#include <cstdint>
#include <string>

#include "core/result.h"
#include "model/config.h"
#include "tensor/dtype.h"

namespace kairo::plan {

// Flag names quoted in refusal messages (the server and `kairo plan` spell their knobs differently).
struct KvKnobNames {
  std::string max_model_len = "--max-model-len";
  std::string concurrency = "--max-num-seqs";
  std::string kv_dtype = "--kv-dtype";
  std::string budget = "--mem-budget-gb";
  // The budget knob's value is budget_bytes / budget_scale (`kairo plan --mem-gb` sets the device's memory, of which
  // only the usable fraction is budget).
  double budget_scale = 1.0;
};

struct KvPoolRequest {
  uint64_t budget_bytes = 0;       // all the process may use: weights + KV + activations + overhead
  uint64_t weights_bytes = 0;
  uint64_t activation_bytes = 0;   // see activation_bytes() in memory_plan.h
  uint64_t overhead_bytes = 0;     // runtime overhead of the device
  uint64_t adapter_bytes = 0;      // LoRA adapters and their step scratch (AdapterMemory::total_bytes)
  std::string adapter_fix;         // how to shrink adapter_bytes ("lower --max-loras or --max-lora-rank"), or ""
  DType kv_dtype = DType::F16;
  int block_size = 16;             // tokens per KV block
  int max_model_len = 0;           // longest sequence (prompt + output) to serve
  int min_concurrency = 1;         // sequences of max_model_len that must fit at the same time
  int max_sequences = 0;           // the pool never holds more than this many sequences of max_model_len (blocks
                                   // beyond what a full batch can use would sit idle); 0 = no cap
  // The server's --max-num-seqs and --max-num-batched-tokens: they size the sliding-window layers' own pool
  // (kv::window_group_blocks), when the model has such layers.
  int max_num_seqs = 1;
  int max_batch_tokens = 512;
  KvKnobNames knobs;
  uint64_t window_kv_bytes = 0;    // set by size_kv_pool: the windowed layers' pool, placed before the rest
  // Bytes per token slot of a second pool with as many slots (a speculative draft model's KV): counted in every
  // block, so the two pools together fit the budget.
  uint64_t extra_bytes_per_token = 0;
};

struct KvSizing {
  int64_t n_blocks = 0;            // every block the budget leaves room for, up to max_sequences × blocks_per_sequence
  uint64_t bytes_per_block = 0;    // block_size × kv_bytes_per_token (of the layers that keep the whole context)
  // Models with sliding-window layers: their own pool, bounded by the window, not the context.
  int64_t n_window_blocks = 0;     // min(kv::window_group_blocks(...), n_blocks)
  uint64_t window_bytes_per_block = 0;
  uint64_t kv_bytes = 0;           // n_blocks × bytes_per_block + n_window_blocks × window_bytes_per_block
  int64_t n_token_slots = 0;       // n_blocks × block_size
  int64_t blocks_per_sequence = 0; // ceil(max_model_len / block_size)
  int64_t max_concurrency_at_max_len = 0;  // n_blocks / blocks_per_sequence
};

// Bytes of K and V for one token over all layers: 2 × n_layers × n_kv_heads × row_bytes(kv_dtype, head_dim).
// For F16/BF16 that is 2 × n_layers × kv_dim × 2; Q8_0 stores 34 bytes per 32 values and needs head_dim % 32 == 0.
Result<uint64_t> kv_bytes_per_token(const model::ModelConfig& config, DType kv_dtype);
// The part of that of the sliding-window layers (0 for a model without them).
uint64_t window_kv_bytes_per_token(const model::ModelConfig& config, uint64_t kv_bytes_per_token);

// Sizes the pool, or refuses with what to change: "context 8192 × concurrency 16 needs 12.0 GiB of KV cache but
// only 3.1 GiB is left after 4.2 GiB of weights ...; lower --max-model-len to 2048, or ...".
Result<KvSizing> size_kv_pool(const model::ModelConfig& config, const KvPoolRequest& request);

}  // namespace kairo::plan
