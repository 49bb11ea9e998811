#pragma once
// A LoRA adapter read from a GGUF file (adapter_format.h) and validated against the base model it is for, the way
// model files are: every tensor pairs with its partner, names a base tensor kairo can adapt, has that tensor's
// shape and a supported type, and a rank from 1 to the cap; the adapter is for the base's architecture. Errors name
// the file, the tensor and what to change. The pairs are dequantized to f32 at load (adapters are small: rank 16 on
// every projection of TinyLlama is 0.4 % of its parameters).
#include <cstdint>
#include <string>
#include <vector>

#include "core/result.h"
#include "gguf/gguf_file.h"
#include "model/config.h"
#include "model/lora/adapter_format.h"
#include "model/tensor_table.h"
#include "tensor/dtype.h"

namespace kairo::model::lora {

struct LoadOptions {
  float scale = 1.0f;             // the user's scale, multiplied into every pair's
  int max_rank = kDefaultMaxRank; // a pair of a larger rank is refused
};

// One adapted base matrix: W' = W + scale · B·A.
struct LoraWeight {
  std::string base_name;          // "blk.0.attn_q.weight"
  TensorSlot slot = TensorSlot::Q;  // Q, K, V, Qkv, AttnOutput, Gate, Up, GateUp or Down
  int layer = -1;
  int64_t n_in = 0;               // the base matrix's columns (dims[0])
  int64_t n_out = 0;              // its rows (dims[1])
  int rank = 0;
  DType a_type = DType::F32;      // as stored in the file
  DType b_type = DType::F32;
  std::vector<float> a;           // [rank, n_in]
  std::vector<float> b;           // [n_out, rank]
  float scale = 0;                // effective_scale(alpha, rank, user scale)
};

struct Adapter {
  std::string path;
  std::string arch;               // general.architecture (the base's)
  std::string name;               // general.name (may be empty)
  float alpha = 0;                // adapter.lora.alpha (0: absent)
  float user_scale = 1.0f;
  std::vector<LoraWeight> weights;  // in the base file's tensor order
  // Tensors llama.cpp also skips: norm vectors some converters include (*_norm.weight). Callers may warn.
  std::vector<std::string> ignored;

  int max_rank() const;
  uint64_t n_params() const;      // elements of every A and B
  const LoraWeight* find(const std::string& base_name) const;
};

// Reads and validates `file` as an adapter for `base` (whose config is `base_config`, from read_config).
Result<Adapter> read_adapter(const gguf::File& file, const gguf::File& base, const ModelConfig& base_config,
                             const LoadOptions& options = {});
// Opens `path`, then read_adapter.
Result<Adapter> load_adapter(const std::string& path, const gguf::File& base, const ModelConfig& base_config,
                             const LoadOptions& options = {});

// The base tensors an adapter may target: a model matrix of one of the slots above, not an expert stack, the
// embedding, the output or the router. Shared by the loader and `kairo lora synth`.
bool is_adaptable(const TensorEntry& entry);

}  // namespace kairo::model::lora
