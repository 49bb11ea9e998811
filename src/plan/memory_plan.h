#pragma once
// memory ≈ weights + KV cache + activations + runtime overhead, and the roofline bounds that follow from it:
//   decode step time  ≥ (weight bytes read per step + C × KV bytes read at context L) / bandwidth
//                     ≥ C × (2 × matmul params + 4 × n_layers × q_dim × L) / ops per second
//   prefill time      ≥ (2 × matmul params × L + 2 × n_layers × q_dim × L²) / ops per second
//                     ≥ weight bytes × ceil(L / max batch tokens) / bandwidth
// Int8 throughput is used when most matmul bytes are block-quantized (the kernels quantize activations to 8 bits),
// bf16 throughput otherwise.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"
#include "model/config.h"
#include "plan/adapter_memory.h"
#include "plan/device_catalog.h"
#include "plan/kv_sizing.h"
#include "plan/model_shapes.h"
#include "plan/trained_context.h"

namespace kairo::plan {

struct TypeBytes {
  DType type = DType::F32;
  int n_tensors = 0;
  int64_t n_elements = 0;
  uint64_t n_bytes = 0;
};

struct WeightsSummary {
  std::vector<TypeBytes> by_type;     // largest first
  uint64_t total_bytes = 0;
  int64_t n_params = 0;               // every element of every tensor
  int64_t n_matmul_params = 0;        // weights multiplied per token: all matrices but the embedding lookup
                                      // (which counts once more as the output projection when embeddings are tied);
                                      // of an expert stack, the chosen experts only
  uint64_t bytes_read_per_token = 0;  // decode: every matrix (of the expert stacks, the chosen experts) and vector
                                      // once, plus one embedding row
  bool quantized = false;             // most matmul bytes are block-quantized types
  uint64_t expert_stack_bytes = 0;    // all expert stacks (a mixture of experts), every expert
  double expert_fraction = 1.0;       // the share of them one token reads

  // Weight bytes one decode step of n tokens (of different sequences) reads: a mixture of experts reads each expert
  // some token chose, n_experts * (1 - (1 - fraction)^n) of them on average with independent choices.
  double bytes_read_per_step(double n_tokens) const;
};

// expert_fraction: the share of each expert stack (a 3-D *_exps tensor) one token reads, n_experts_used / n_experts
// (model::ModelConfig); per-token bytes and multiply-adds count only that share.
WeightsSummary summarize_weights(const std::vector<TensorSpec>& tensors, double expert_fraction = 1.0);
// n_experts_used / n_experts, or 1 for a dense model.
double expert_fraction(const model::ModelConfig& config);

// Activation and workspace bytes of one forward step over `batch_tokens` tokens, `logit_rows` of which need
// logits, attending over up to `context_length` positions. All f32 unless noted:
//   per token:  residual + norm output (2 × dim) + q + attention output (2 × q_dim) + k + v (2 × kv_dim)
//               + gate + up (2 × ffn_dim)                       (swiglu writes over gate)
//               + an 8-bit copy of the widest matmul input: max(dim, ffn_dim) × 34/32 bytes
//   logits:     logit_rows × n_vocab
//   attention:  n_heads × context_length scores (one query row per head at a time)
uint64_t activation_bytes(const model::ModelConfig& config, int64_t batch_tokens, int64_t logit_rows,
                          int64_t context_length);

// A speculative draft model (`--draft-model`): its weights, and its own KV pool with as many token slots as the
// model's (the engine gives it one block for each of the model's), which costs what the draft's layers store per
// token in every block.
struct DraftModelSpec {
  std::string source;             // the file, for the printed plan
  WeightsSummary weights;
  uint64_t kv_bytes_per_token = 0;
};
Result<DraftModelSpec> draft_model_spec(const model::ModelConfig& config, const std::vector<TensorSpec>& tensors,
                                        DType kv_dtype);

struct PlanRequest {
  int context_length = 0;         // tokens per sequence; 0 = the model's context length
  int concurrency = 1;            // sequences served at once
  DType kv_dtype = DType::F16;
  int kv_block_size = 16;
  int max_batch_tokens = 512;     // tokens in one forward step (prefill chunk)
  KvKnobNames knobs = {"--context", "--concurrency", "--kv-dtype", "--mem-gb"};
  std::optional<DraftModelSpec> draft;
  AdapterMemory adapters;         // LoRA adapters (adapter_memory): counted like the weights, before the KV cache
};

struct MemoryBreakdown {
  uint64_t weights_bytes = 0;
  uint64_t kv_bytes = 0;          // concurrency × ceil(L / block) blocks
  uint64_t draft_weights_bytes = 0;  // a draft model's (PlanRequest::draft), counted in total_bytes
  uint64_t draft_kv_bytes = 0;       // its pool: as many token slots as kv_bytes holds
  uint64_t adapter_bytes = 0;        // PlanRequest::adapters.total_bytes(), counted in total_bytes
  uint64_t activation_bytes = 0;
  uint64_t overhead_bytes = 0;
  uint64_t total_bytes = 0;
  uint64_t usable_bytes = 0;      // device capacity × usable fraction
  bool fits = false;
};

struct Bounds {
  double decode_step_bytes = 0;        // bytes read per decode step at the requested concurrency and context
  double decode_step_flops = 0;
  double decode_tps_per_stream = 0;    // tokens/s each stream sees
  double decode_tps_aggregate = 0;     // all streams together
  bool decode_compute_bound = false;
  double decode_tps_single = 0;        // one stream at the requested context
  double prefill_seconds = 0;          // a prompt of the requested context length, alone
  double prefill_tps = 0;
  bool prefill_compute_bound = true;
  double ops_per_second = 0;           // the throughput used (int8 or bf16)
};

struct Plan {
  model::ModelConfig config;
  DeviceSpec device;
  PlanRequest request;                 // with context_length resolved
  WeightsSummary weights;
  uint64_t kv_bytes_per_token = 0;
  MemoryBreakdown memory;
  int max_context_at_concurrency = 0;  // largest L (multiple of the block size, ≤ model context) that fits at C
  int max_concurrency_at_context = 0;  // largest C that fits at L
  Result<KvSizing> kv_pool = Error{""};  // what `kairo serve` allocates on this device's budget, or its refusal
                                         // (also when the context is beyond the model's: serve refuses that first)
  TrainedContext trained_context;      // the requested context against the model's; memory.fits says nothing of it
  std::string to_fit;                  // when concurrency × context does not fit: what to change; "" when it fits
  Bounds bounds;
};

// The KV pool request `kairo serve --max-model-len L --max-num-seqs C --kv-dtype D --block-size B
// --max-num-batched-tokens T [--draft-model F]` makes on this device (L, C, D, B, T = the request's context_length,
// concurrency, kv_dtype, kv_block_size, max_batch_tokens): every block the budget leaves after weights, activations and overhead,
// up to C sequences of L tokens (more would sit idle); refused only when not even one sequence of L fits -- with
// fewer blocks the server batches fewer sequences at once and preempts. make_plan sizes its kv_pool with this very
// request, so the capacity `kairo plan` predicts is the one the server prints. A draft model adds its weights and,
// in every block, its KV (KvPoolRequest::extra_bytes_per_token).
KvPoolRequest kv_pool_request(const model::ModelConfig& config, const WeightsSummary& weights,
                              const DeviceSpec& device, const PlanRequest& request);

// `kairo serve --kv-cache-memory`: the same request with a budget for the KV cache alone (weights, activations and
// overhead are then the user's business): exactly the blocks that budget holds, no cap.
KvPoolRequest kv_cache_budget_request(KvPoolRequest request, uint64_t kv_cache_bytes);

Result<Plan> make_plan(const model::ModelConfig& config, const std::vector<TensorSpec>& tensors,
                       const DeviceSpec& device, const PlanRequest& request);

}  // namespace kairo::plan
