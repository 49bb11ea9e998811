#pragma once
// The scalar reference implementation of every op in kernels/backend.h.
#include "kernels/backend.h"

namespace kairo::kernels::ref {

void matmul(const MatrixView& w, const float* x, float* y, int64_t n_tokens, ThreadPool& pool);
void rms_norm(const float* x, const float* weight, float* y, int64_t n_tokens, int64_t dim, float eps);
void rope(float* x, const int32_t* positions, int64_t n_tokens, const RopeParams& p);
void swiglu(const float* gate, const float* up, float* out, int64_t n);
void geglu(const float* gate, const float* up, float* out, int64_t n);
void add(float* y, const float* x, int64_t n);
void add_bias(float* x, const float* bias, int64_t n_tokens, int64_t n);
void get_row(const MatrixView& table, int64_t row, float* out);
void kv_write(const KvLayerView& kv, const int64_t* slot_mapping, const float* k, const float* v, int64_t n_tokens);
void attention(const float* q, float* out, const KvLayerView& kv, const AttentionBatch& batch, int n_heads,
               float scale, ThreadPool& pool);
// One thread, token by token (ref_lora_deltas.cpp).
void add_lora_deltas(const LoraDeltas& job, ThreadPool& pool);

}  // namespace kairo::kernels::ref
