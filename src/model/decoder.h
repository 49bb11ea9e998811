#pragma once
// The generic pre-norm decoder (llama family and its relatives), written once and parameterised by ModelConfig.
#include <vector>

#include "core/thread_pool.h"
#include "kernels/backend.h"
#include "model/batch.h"
#include "model/config.h"
#include "model/kv_storage.h"
#include "model/weights.h"

namespace kairo::model {

// Activation buffers, grown to the largest batch seen and then reused (no allocation in steady state).
struct DecoderScratch {
  std::vector<float> x;       // [n_tokens, dim] residual stream
  std::vector<float> xn;      // [n_tokens, dim] normed input of a sub-block
  std::vector<float> q;       // [n_tokens, q_dim]
  std::vector<float> k;       // [n_tokens, kv_dim]
  std::vector<float> v;       // [n_tokens, kv_dim]
  std::vector<float> attn;    // [n_tokens, q_dim]
  std::vector<float> proj;    // [n_tokens, dim]
  std::vector<float> gate;    // [n_tokens, ffn_dim]
  std::vector<float> up;      // [n_tokens, ffn_dim]
  std::vector<float> out_x;   // [n_logits, dim]
};

void decoder_forward(const ModelConfig& c, const ModelWeights& w, const kernels::Backend& be, const Batch& batch,
                     KvStorage& kv, DecoderScratch& s, std::vector<float>& logits, ThreadPool& pool);

}  // namespace kairo::model
