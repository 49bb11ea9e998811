#pragma once
// The kernel backend table: every op the model's forward pass needs. Model code calls only these, so a backend
// (scalar reference, CPU with AVX2/AVX-512/AMX, CUDA) is one implementation of this table. The scalar reference
// (ref/) is the oracle: every optimized kernel is tested against it.
//
// Layout conventions: activations are row-major f32, one row per token: [n_tokens, dim]. Weight matrices are
// [n_rows = out features, n_cols = in features], each row stored contiguously in the weight's dtype (GGUF layout).
#include <cstdint>
#include <memory>

#include "core/thread_pool.h"
#include "tensor/dtype.h"

namespace kairo::kernels {

struct MatrixView {
  DType dtype = DType::F32;
  const void* data = nullptr;
  int64_t n_rows = 0;     // output features
  int64_t n_cols = 0;     // input features (a multiple of the dtype's block size)
  size_t row_bytes = 0;   // bytes between consecutive rows
  // 0: GGUF layout. Otherwise the rows were repacked by a backend's pack_weights into a layout private to that
  // backend: pass such a view only to that backend's matmul (never to get_row or another backend).
  uint32_t packing = 0;
};

// A weight matrix repacked at load time (Backend::pack_weights). `view` is what to pass to matmul; `storage` owns
// the packed bytes. An empty result (view.data == nullptr) means the backend has no better place for it: keep the
// original. (The CPU backends with int8 kernels return a copy even where the layout stays GGUF's: packing 0, in
// huge-page memory.)
struct PackedMatrix {
  MatrixView view;
  std::shared_ptr<void> storage;
};

enum class RopeStyle { Normal, Neox };  // Normal: rotate adjacent pairs (llama); Neox: rotate halves (qwen2)

struct RopeParams {
  int n_heads = 0;
  int head_dim = 0;
  int n_rot = 0;             // rotated dims per head (== head_dim for llama/qwen2)
  float freq_base = 10000.0f;
  float freq_scale = 1.0f;   // linear scaling: position * freq_scale
  RopeStyle style = RopeStyle::Normal;
  // [n_rot / 2] or null: pair i's angle is divided by freq_factors[i] (llama-3 rope scaling: the GGUF's
  // rope_freqs tensor). A host pointer on every device (the angles are computed on the host side).
  const float* freq_factors = nullptr;
  // cos and sin are multiplied by it (YaRN's magnitude correction, 1 + 0.1 ln(scaling factor)); 1 otherwise.
  float mscale = 1.0f;
};

// The paged KV cache of one layer: n_blocks blocks of block_size token slots; slot s = block * block_size + offset.
// K and V are [n_slots, n_kv_heads, head_dim] in kv_dtype (F32, F16 or BF16 here; Q8_0 later).
struct KvLayerView {
  void* k = nullptr;
  void* v = nullptr;
  DType dtype = DType::F16;
  int n_kv_heads = 0;
  int head_dim = 0;
  int block_size = 16;
};

// Which KV each query token attends to. Token t belongs to sequence seq_idx[t] at position positions[t] and attends
// causally to positions 0..positions[t] of that sequence (with a window w > 0: positions[t] - w + 1 .. positions[t]),
// found through the sequence's block table.
struct AttentionBatch {
  int64_t n_tokens = 0;
  const int32_t* positions = nullptr;     // [n_tokens]
  const int32_t* seq_idx = nullptr;       // [n_tokens]
  const int32_t* block_tables = nullptr;  // [n_seqs, max_blocks_per_seq]
  int max_blocks_per_seq = 0;
  int window = 0;       // > 0: a sliding-window layer; each token attends to its last `window` positions only
  float softcap = 0;    // > 0: each scaled score s becomes softcap * tanh(s / softcap) before the softmax (gemma2)
  // [n_heads] or null: attention sinks (gpt-oss), one learned logit per query head that joins the softmax's
  // normalisation and attends to nothing: p_j = exp(s_j) / (exp(sink) + sum_k exp(s_k)).
  const float* sinks = nullptr;
};

// How a step's matmuls may round (model::Batch carries it).
enum class Numerics {
  // The batch-invariance contract: a token's outputs do not depend on the other tokens of the call (or on how a
  // prompt is chunked). What deterministic (temperature-0) requests need.
  Exact,
  // A backend may take a faster path whose rounding depends on the batch (AMX bf16 tiles for many tokens); the
  // results stay within the reference tolerances.
  Relaxed,
};

// A mixture of experts' matmul over all of a step's experts at once (Backend::matmul_grouped). Group g (an expert)
// multiplies its n_mats weights ws[g * n_mats + i] (gate and up: 2; down: 1) by its rows of x and writes rows
// [offsets[g], offsets[g + 1]) of each ys[i]: every group's outputs packed in group order, ys[i]'s rows
// ws[i].n_rows wide (the same in every group). Group g's input is x rows in_rows[offsets[g] .. offsets[g + 1]), or
// with in_rows null x rows offsets[g] .. offsets[g + 1] (x rows ws[0].n_cols wide).
struct GroupedMatmul {
  const MatrixView* ws = nullptr;  // [n_groups * n_mats]
  int n_mats = 0;
  int n_groups = 0;
  const int64_t* offsets = nullptr;  // [n_groups + 1], non-decreasing, offsets[0] = 0
  const int32_t* in_rows = nullptr;  // [offsets[n_groups]] or null
  const float* x = nullptr;
  float* const* ys = nullptr;  // [n_mats]
};

// One adapter's low-rank pair for one projection (LoraDeltas): the projection's delta is scale · B·(A·x). A and B
// are F32, F16 or BF16 rows in GGUF layout (packing 0).
struct LoraPairView {
  MatrixView a;  // [rank, n_in]; a.data null: this group leaves the projection alone
  MatrixView b;  // [n_out, rank]
  float scale = 0;
};

// Every LoRA delta of one call site of a step (Backend::add_lora_deltas): n_targets projections (Q, K and V; gate
// and up; or one) whose outputs ys[i] were computed from the same input x. The step's tokens are grouped by adapter:
// group g is x rows rows[offsets[g] .. offsets[g + 1]), and each of its rows r gets
//   ys[i][r, :] += B·(scale · (A·x[r, :]))   with (A, B, scale) = pairs[g * n_targets + i].
// Batch invariance: every output of a token is a sum over that token's values only, in an order fixed by the shapes
// (never by the number of tokens or groups, or by how the work is split between threads).
struct LoraDeltas {
  const float* x = nullptr;  // [n_tokens, n_in]
  int64_t n_in = 0;
  int n_groups = 0;
  const int64_t* offsets = nullptr;  // [n_groups + 1], non-decreasing, offsets[0] = 0
  const int32_t* rows = nullptr;     // [offsets[n_groups]], distinct
  int n_targets = 0;
  const LoraPairView* pairs = nullptr;  // [n_groups * n_targets]
  float* const* ys = nullptr;           // [n_targets]: rows of pairs' b.n_rows (the same in every group)
  // Scratch for the shrinks: room for n_targets * offsets[n_groups] * max_rank floats.
  float* h = nullptr;
  int max_rank = 0;  // the largest rank among the pairs
};

struct Backend {
  const char* name;

  // y[t, r] = sum_c W[r, c] * x[t, c].   x: [n_tokens, n_cols], y: [n_tokens, n_rows]
  void (*matmul)(const MatrixView& w, const float* x, float* y, int64_t n_tokens, ThreadPool& pool);

  // y[t, :] = x[t, :] / sqrt(mean(x[t, :]^2) + eps) * weight.   x, y: [n_tokens, dim] (y may alias x)
  void (*rms_norm)(const float* x, const float* weight, float* y, int64_t n_tokens, int64_t dim, float eps);

  // Rotates x in place. x: [n_tokens, n_heads, head_dim]
  void (*rope)(float* x, const int32_t* positions, int64_t n_tokens, const RopeParams& p);

  // out[i] = silu(gate[i]) * up[i]
  void (*swiglu)(const float* gate, const float* up, float* out, int64_t n);

  // out[i] = gelu(gate[i]) * up[i], GELU's tanh form: 0.5 g (1 + tanh(sqrt(2/pi) (g + 0.044715 g^3))) (gemma)
  void (*geglu)(const float* gate, const float* up, float* out, int64_t n);

  // y[i] += x[i]
  void (*add)(float* y, const float* x, int64_t n);

  // Adds bias[c] to every row: x: [n_tokens, n]
  void (*add_bias)(float* x, const float* bias, int64_t n_tokens, int64_t n);

  // Row of an embedding table into f32: out[dim] = dequant(table row `row`).
  void (*get_row)(const MatrixView& table, int64_t row, float* out);

  // Writes K and V of n_tokens into their slots. k, v: [n_tokens, n_kv_heads, head_dim]
  void (*kv_write)(const KvLayerView& kv, const int64_t* slot_mapping, const float* k, const float* v,
                   int64_t n_tokens);

  // out[t, h, :] = softmax(q[t, h, :] . K[j, h / group, :] * scale) . V[j, h / group, :] over the slots token t
  // attends to. q, out: [n_tokens, n_heads, head_dim]
  void (*attention)(const float* q, float* out, const KvLayerView& kv, const AttentionBatch& batch, int n_heads,
                    float scale, ThreadPool& pool);

  // Optional (nullptr: nothing to repack). Repacks a matmul weight into a layout this backend's matmul reads faster
  // (e.g. scales gathered per 16 blocks so the one-token kernels stay at the memory bandwidth). Call once at load
  // time per weight; keep the original view for get_row (tied embeddings) and other backends. Called from several
  // threads at once for different weights (the model packs on every core).
  PackedMatrix (*pack_weights)(const MatrixView& w);

  // Optional (nullptr: call matmul per weight). ys[i] = ws[i] · x for n_mats weights that read the same input
  // (Q, K and V; gate and up), bit for bit what matmul gives each: the input is quantized once and one parallel pass
  // covers the rows of all of them (one barrier instead of n_mats).
  void (*matmul_shared_input)(const MatrixView* ws, int n_mats, const float* x, float* const* ys, int64_t n_tokens,
                              ThreadPool& pool);

  // Optional (nullptr: the exact paths). As matmul_shared_input under Numerics::Relaxed: free to round differently
  // depending on n_tokens (where it has nothing faster, it gives the exact results).
  void (*matmul_relaxed)(const MatrixView* ws, int n_mats, const float* x, float* const* ys, int64_t n_tokens,
                         ThreadPool& pool);

  // Optional (nullptr: the device gathers each group's rows and runs matmul_shared_input per group). Every output is
  // bit for bit what matmul_shared_input(numerics) gives its group alone, but the groups share parallel passes: a
  // step of 16 sequences with top-8 of 64 experts runs ~56 experts of 2-3 tokens per layer, and one pass with one
  // barrier per matmul replaces ~56.
  void (*matmul_grouped)(const GroupedMatmul& g, ThreadPool& pool, Numerics numerics) = nullptr;

  // Optional (nullptr: the device runs the deltas as its own ops, group by group). LoraDeltas in two parallel passes
  // (every shrink, then every expand) instead of ~10 small ops per adapter group: at rank 16 the arithmetic is tiny
  // and the per-op dispatches were what a step with several adapters paid for. Batch invariant under any Numerics.
  void (*add_lora_deltas)(const LoraDeltas& job, ThreadPool& pool) = nullptr;
};

// ys[i] = ws[i] · x through the backend's matmul_shared_input when it has one, else matmul per weight.
void matmul_shared_input(const Backend& be, const MatrixView* ws, int n_mats, const float* x, float* const* ys,
                         int64_t n_tokens, ThreadPool& pool, Numerics numerics = Numerics::Exact);
// y = w · x through the backend's relaxed path when numerics allows one and the backend has it, else be.matmul.
void matmul(const Backend& be, const MatrixView& w, const float* x, float* y, int64_t n_tokens, ThreadPool& pool,
            Numerics numerics);

// The scalar reference backend (the oracle).
const Backend& reference_backend();
// The fastest backend for this CPU (falls back to the reference where no optimized kernel exists).
const Backend& best_cpu_backend();

}  // namespace kairo::kernels
