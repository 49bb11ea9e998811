#pragma once
// Hyperparameters of a decoder-only transformer, read from GGUF metadata and validated. Pure data: the planner
// reads it from a header-only parse without loading weights.
#include <cstdint>
#include <string>

#include "core/result.h"
#include "gguf/gguf_file.h"
#include "kernels/backend.h"

namespace kairo::model {

struct ModelConfig {
  std::string arch;          // general.architecture: "llama", "qwen2", "qwen3"
  std::string name;          // general.name (may be empty)
  int n_layers = 0;
  int dim = 0;               // embedding width
  int n_heads = 0;
  int n_kv_heads = 0;
  int head_dim = 0;          // per-head width of Q and K (and V)
  int ffn_dim = 0;
  int n_vocab = 0;
  int context_length = 0;
  float rms_eps = 1e-5f;
  kernels::RopeParams rope;  // n_heads of the Q projection; the forward reuses it for K with n_kv_heads
  bool qkv_bias = false;     // qwen2
  bool qk_norm = false;      // qwen3: per-head RMS norm of Q and K before rope
  bool tied_embeddings = false;  // output.weight absent: the token embedding doubles as the output projection

  int q_dim() const { return n_heads * head_dim; }
  int kv_dim() const { return n_kv_heads * head_dim; }
};

// Reads and validates the config of a supported architecture. Errors name the key and what to change.
Result<ModelConfig> read_config(const gguf::File& file);

}  // namespace kairo::model
