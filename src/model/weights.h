#pragma once
// The model's weights, bound by name from a GGUF file with shape and dtype checked at load, so the forward pass can
// assume every tensor is present and well-formed. Views point into the file mapping (no copies).
#include <vector>

#include "core/result.h"
#include "gguf/gguf_file.h"
#include "kernels/backend.h"
#include "model/config.h"

namespace kairo::model {

struct LayerWeights {
  const float* attn_norm = nullptr;  // [dim]
  kernels::MatrixView wq, wk, wv;    // [q_dim, dim], [kv_dim, dim], [kv_dim, dim]
  const float* bq = nullptr;         // [q_dim]   (qkv_bias only)
  const float* bk = nullptr;         // [kv_dim]
  const float* bv = nullptr;         // [kv_dim]
  kernels::MatrixView wo;            // [dim, q_dim]
  const float* ffn_norm = nullptr;   // [dim]
  kernels::MatrixView w_gate, w_up;  // [ffn_dim, dim]
  kernels::MatrixView w_down;        // [dim, ffn_dim]
};

struct ModelWeights {
  kernels::MatrixView token_embd;    // [n_vocab, dim]
  const float* output_norm = nullptr;
  kernels::MatrixView output;        // [n_vocab, dim] (the embedding when tied)
  std::vector<LayerWeights> layers;
  uint64_t n_bytes = 0;              // bytes of all bound tensors
  uint64_t n_params = 0;
};

Result<ModelWeights> bind_weights(const gguf::File& file, const ModelConfig& config);

}  // namespace kairo::model
