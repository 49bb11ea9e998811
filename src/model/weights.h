#pragma once
// The model's weights, bound by name from a GGUF file with shape and dtype checked at load, so the forward pass can
// assume every tensor is present and well-formed. As bound, every span is the tensor's address in the file mapping
// (no copies); Model then moves the weights to its device (kernels::Device::upload_matrices).
#include <vector>

#include "core/result.h"
#include "gguf/gguf_file.h"
#include "kernels/device.h"
#include "model/config.h"

namespace kairo::model {

// f32 vectors (norm weights, biases) are spans of n floats; matrices carry their layout and their span.
using VectorSpan = kernels::DeviceSpan;
using Matrix = kernels::DeviceMatrix;

struct LayerWeights {
  VectorSpan attn_norm;              // [dim]
  Matrix wq, wk, wv;                 // [q_dim, dim], [kv_dim, dim], [kv_dim, dim]
  VectorSpan bq, bk, bv;             // [q_dim], [kv_dim], [kv_dim]   (qkv_bias only)
  VectorSpan bo;                     // [dim]                          (attn_output_bias only)
  VectorSpan sinks;                  // [n_heads]                      (attn_sinks only)
  VectorSpan q_norm, k_norm;         // [head_dim] each                (qk_norm only)
  Matrix wo;                         // [dim, q_dim]
  VectorSpan post_attn_norm;         // [dim]                          (post_norms only)
  VectorSpan ffn_norm;               // [dim]
  VectorSpan post_ffn_norm;          // [dim]                          (post_norms only)
  Matrix w_gate, w_up;               // [ffn_dim, dim]                 (dense feed-forward)
  Matrix w_down;                     // [dim, ffn_dim]
  // Mixture of experts (config.moe(), instead of the dense three): the router and every expert's matrices, each
  // expert a 2-D slice of the file's 3-D ffn_{gate,up,down}_exps tensor, so it uploads and multiplies like any
  // other weight and a step reads only the experts its tokens chose.
  Matrix router;                     // [n_experts, dim]               (ffn_gate_inp)
  std::vector<Matrix> exp_gate;      // n_experts x [expert_ffn_dim, dim]
  std::vector<Matrix> exp_up;        // n_experts x [expert_ffn_dim, dim]
  std::vector<Matrix> exp_down;      // n_experts x [dim, expert_ffn_dim]
  VectorSpan router_bias;            // [n_experts]                    (moe_biases only)
  VectorSpan exp_gate_bias, exp_up_bias;  // [n_experts, expert_ffn_dim] (moe_biases only)
  VectorSpan exp_down_bias;          // [n_experts, dim]               (moe_biases only)
};

struct ModelWeights {
  Matrix token_embd;                 // [n_vocab, dim]
  VectorSpan output_norm;            // [dim]
  Matrix output;                     // [n_vocab, dim] (the embedding when tied)
  // [n_rot / 2] rope frequency factors (llama-3 rope scaling, the rope_freqs tensor) or null. Host memory (the file
  // mapping) on every device: rope angles are computed on the host side (kernels::RopeParams::freq_factors).
  const float* rope_freq_factors = nullptr;
  // phi3's long-context rope (rope_factors_long / rope_factors_short, [n_rot / 2] each, or both null): the forward
  // uses rope_freq_factors, which points at the long set when the context the model runs at (Model::
  // set_context_length, by default the model's full context) exceeds rope.scaling.original_context_length, else at
  // the short one (llama.cpp's choice by n_ctx per sequence).
  const float* rope_factors_long = nullptr;
  const float* rope_factors_short = nullptr;
  std::vector<LayerWeights> layers;
  uint64_t n_bytes = 0;              // bytes of all bound tensors
  uint64_t n_params = 0;
};

// Every tensor of the file must be bound: one the forward pass would not use (a feature kairo does not implement)
// is refused by name rather than silently ignored, which would give wrong outputs.
Result<ModelWeights> bind_weights(const gguf::File& file, const ModelConfig& config);

}  // namespace kairo::model
