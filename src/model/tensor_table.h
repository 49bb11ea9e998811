#pragma once
// Every tensor a model of a given config holds in its GGUF file: names, GGUF shapes, and where each goes. It is the
// one list that weight binding (model/weights.cpp) and the planner (plan/model_shapes.cpp) read, so a family's new
// tensor is added here once. Which tensors appear follows the config's flags, which each architecture file
// (model/arch/) sets; the rope factor tensors, which a file may or may not carry, are bound in weights.cpp.
#include <cstdint>
#include <string>
#include <vector>

#include "model/config.h"

namespace kairo::model {

// Where a tensor goes in ModelWeights / LayerWeights.
enum class TensorSlot {
  TokenEmbd, OutputNorm, Output,
  AttnNorm, Q, K, V, Qkv, QBias, KBias, VBias, QNorm, KNorm, AttnOutput, AttnOutputBias, Sinks,
  FfnNorm, PostAttnNorm, PostFfnNorm,
  Gate, Up, GateUp, Down,
  Router, RouterBias, ExpGate, ExpUp, ExpDown, ExpGateBias, ExpUpBias, ExpDownBias,
};

enum class TensorForm {
  F32,     // f32 only: norms, biases, sinks
  Matrix,  // a matrix of any supported type; dims [n_cols, n_rows]
  Fused,   // a matrix whose rows are several matrices one after another (phi3's attn_qkv, gate||up ffn_up)
  Stack,   // one matrix per expert; dims [n_cols, n_rows, n_experts]
};

struct TensorEntry {
  std::string name;
  std::vector<int64_t> dims;  // ggml order: dims[0] is the row (contiguous) dimension
  TensorSlot slot;
  TensorForm form;
  int layer = -1;               // -1: not a layer's tensor
  std::vector<int64_t> parts;   // Fused: the rows of each part
  bool written_f32 = false;     // a matrix converters keep in F32 (the router)
};

// The tensors of a model with this config, in the order llama.cpp's converter writes them.
std::vector<TensorEntry> model_tensors(const ModelConfig& c);

}  // namespace kairo::model
