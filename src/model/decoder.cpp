#include "model/decoder.h"

#include <cmath>
#include <cstring>

namespace kairo::model {
namespace {

void grow(std::vector<float>& v, int64_t n) {
  if (static_cast<int64_t>(v.size()) < n) v.resize(static_cast<size_t>(n));
}

}  // namespace

void decoder_forward(const ModelConfig& c, const ModelWeights& w, const kernels::Backend& be, const Batch& batch,
                     KvStorage& kv, DecoderScratch& s, std::vector<float>& logits, ThreadPool& pool) {
  const int64_t n = batch.n_tokens();
  const int64_t n_logits = static_cast<int64_t>(batch.logits_rows.size());
  grow(s.x, n * c.dim);
  grow(s.xn, n * c.dim);
  grow(s.q, n * c.q_dim());
  grow(s.k, n * c.kv_dim());
  grow(s.v, n * c.kv_dim());
  grow(s.attn, n * c.q_dim());
  grow(s.proj, n * c.dim);
  grow(s.gate, n * c.ffn_dim);
  grow(s.up, n * c.ffn_dim);
  grow(s.out_x, n_logits * c.dim);

  for (int64_t t = 0; t < n; ++t) be.get_row(w.token_embd, batch.token_ids[t], s.x.data() + t * c.dim);

  kernels::RopeParams rope_q = c.rope;
  kernels::RopeParams rope_k = c.rope;
  rope_k.n_heads = c.n_kv_heads;
  const kernels::AttentionBatch attn_batch{n, batch.positions.data(), batch.seq_idx.data(), batch.block_tables.data(),
                                           batch.max_blocks_per_seq};
  const float attn_scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim));

  for (int l = 0; l < c.n_layers; ++l) {
    const LayerWeights& L = w.layers[static_cast<size_t>(l)];
    // Attention block: x += Wo · attention(rope(Wq·norm(x)), K/V cache)
    be.rms_norm(s.x.data(), L.attn_norm, s.xn.data(), n, c.dim, c.rms_eps);
    {
      const kernels::MatrixView qkv[] = {L.wq, L.wk, L.wv};
      float* const out[] = {s.q.data(), s.k.data(), s.v.data()};
      kernels::matmul_shared_input(be, qkv, 3, s.xn.data(), out, n, pool, batch.numerics);
    }
    if (c.qkv_bias) {
      be.add_bias(s.q.data(), L.bq, n, c.q_dim());
      be.add_bias(s.k.data(), L.bk, n, c.kv_dim());
      be.add_bias(s.v.data(), L.bv, n, c.kv_dim());
    }
    be.rope(s.q.data(), batch.positions.data(), n, rope_q);
    be.rope(s.k.data(), batch.positions.data(), n, rope_k);
    const kernels::KvLayerView kv_layer = kv.layer(l);
    be.kv_write(kv_layer, batch.slot_mapping.data(), s.k.data(), s.v.data(), n);
    be.attention(s.q.data(), s.attn.data(), kv_layer, attn_batch, c.n_heads, attn_scale, pool);
    kernels::matmul(be, L.wo, s.attn.data(), s.proj.data(), n, pool, batch.numerics);
    be.add(s.x.data(), s.proj.data(), n * c.dim);

    // Feed-forward block: x += W_down · (silu(W_gate·norm(x)) * W_up·norm(x))
    be.rms_norm(s.x.data(), L.ffn_norm, s.xn.data(), n, c.dim, c.rms_eps);
    {
      const kernels::MatrixView gate_up[] = {L.w_gate, L.w_up};
      float* const out[] = {s.gate.data(), s.up.data()};
      kernels::matmul_shared_input(be, gate_up, 2, s.xn.data(), out, n, pool, batch.numerics);
    }
    be.swiglu(s.gate.data(), s.up.data(), s.gate.data(), n * c.ffn_dim);
    kernels::matmul(be, L.w_down, s.gate.data(), s.proj.data(), n, pool, batch.numerics);
    be.add(s.x.data(), s.proj.data(), n * c.dim);
  }

  // Only the rows that need logits pay for the final norm and the (large) output projection.
  for (int64_t i = 0; i < n_logits; ++i) {
    std::memcpy(s.out_x.data() + i * c.dim, s.x.data() + static_cast<int64_t>(batch.logits_rows[i]) * c.dim,
                sizeof(float) * c.dim);
  }
  be.rms_norm(s.out_x.data(), w.output_norm, s.out_x.data(), n_logits, c.dim, c.rms_eps);
  logits.resize(static_cast<size_t>(n_logits * c.n_vocab));
  kernels::matmul(be, w.output, s.out_x.data(), logits.data(), n_logits, pool, batch.numerics);
}

}  // namespace kairo::model
