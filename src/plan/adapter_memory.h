#pragma once
// Device memory of LoRA adapters, counted beside the weights and the KV cache: the one computation `kairo plan` and
// `kairo serve` share, so the KV tokens the planner predicts with adapters are the ones the server allocates.
//
// An adapter on the device (model/lora/lora_set.h) is, for each base matrix W [n_out, n_in] it adapts, A [rank, n_in]
// and B [n_out, rank] in lora::device_type of the file's type (F16/BF16 as stored, F32 and Q8_0 as f32):
//   bytes = Σ (n_in + n_out) × rank × (2 or 4)
// The memory has three parts:
//  - the adapters given at startup (--lora): their real bytes, from their files' headers (adapter_size);
//  - with runtime loading on (--allow-runtime-lora), room for the rest of --max-loras: runtime slots of
//    --max-lora-rank on every projection of the base an adapter may have (q, k, v, o, gate, up, down; phi3's fused
//    qkv and gate‖up whole; not a mixture of experts' expert stacks) in F16, the type `convert_lora_to_gguf.py` and
//    `kairo lora synth` write by default. The engine admits a runtime load only while the resident adapters fit the
//    total (engine/adapter_slots.h): an F32 or Q8_0 adapter is kept in f32 and takes twice an F16 one's room;
//  - the step's LoRA scratch (model/lora/lora_step.h) at the largest step and rank, once any adapter can be resident.
#include <cstdint>
#include <string>
#include <vector>

#include "model/config.h"
#include "plan/model_shapes.h"
#include "tensor/dtype.h"

namespace kairo::plan {

// The type runtime slots are sized in.
inline constexpr DType kRuntimeAdapterType = DType::F16;

struct AdapterSize {
  uint64_t bytes = 0;  // on the device
  int max_rank = 0;
};

// An adapter file's device size from its tensor infos (tensors_from_file of the adapter GGUF): the .lora_a/.lora_b
// matrices; other tensors (norm vectors the loader skips) count nothing.
AdapterSize adapter_size(const std::vector<TensorSpec>& adapter_tensors);

// One adapter of `rank` on every projection of this base an adapter may have, every matrix in `type`.
uint64_t full_adapter_bytes(const model::ModelConfig& config, int rank, DType type = kRuntimeAdapterType);

// The step's LoRA buffers (LoraScratch::reserve): f32 gathered inputs and expands of the widest projection, and
// the shrinks of up to three projections, for max_batch_tokens tokens at max_rank.
uint64_t lora_scratch_bytes(const model::ModelConfig& config, int64_t max_batch_tokens, int max_rank);

struct AdapterMemoryRequest {
  std::vector<AdapterSize> loaded;  // the --lora adapters
  bool runtime_loads = false;       // --allow-runtime-lora: reserve the rest of max_loras
  int max_loras = 0;                // --max-loras: adapters resident at once, loaded ones included
  int max_lora_rank = 0;            // --max-lora-rank
  int64_t max_batch_tokens = 512;   // tokens in one step (the scratch)
};

struct AdapterMemory {
  uint64_t loaded_bytes = 0;        // the --lora adapters together
  int n_loaded = 0;
  int n_runtime_slots = 0;          // max_loras - n_loaded with runtime loads on, else 0
  uint64_t runtime_slot_bytes = 0;  // full_adapter_bytes(config, max_lora_rank) with runtime loads on, else 0
  int runtime_rank = 0;
  uint64_t scratch_bytes = 0;       // 0 when no adapter can be resident

  // What resident adapters may take at once: the engine's byte budget (EngineConfig::max_lora_bytes).
  uint64_t adapters_bytes() const {
    return loaded_bytes + static_cast<uint64_t>(n_runtime_slots) * runtime_slot_bytes;
  }
  uint64_t total_bytes() const { return adapters_bytes() + scratch_bytes; }
  // "2 adapters 1.20 MiB + 6 runtime slots of rank 16 × 640.00 KiB + step scratch 2.10 MiB", or "" with none.
  std::string describe() const;
};

AdapterMemory adapter_memory(const model::ModelConfig& config, const AdapterMemoryRequest& request);

}  // namespace kairo::plan
