#include "core/out_of_memory.h"
#include "model/decoder.h"

#include <cassert>
#include <cmath>
#include <stdexcept>

#include "model/feed_forward.h"

namespace kairo::model {
namespace {

using kernels::DeviceSpan;

constexpr uint64_t kF32 = sizeof(float);

template <typename T>
DeviceSpan stage(kernels::Device& dev, const std::vector<T>& v) {
  return dev.stage(v.data(), v.size() * sizeof(T));
}

}  // namespace

Status StepBuffers::reserve(const ModelConfig& c, int64_t n_tokens, int64_t n_logits) {
  kernels::Device& dev = *device_;
  auto grow = [&](DeviceSpan& span, int64_t n_floats, const char* what) -> Status {
    const uint64_t bytes = static_cast<uint64_t>(std::max<int64_t>(n_floats, 1)) * kF32;
    if (!span.empty()) dev.free(span);
    span = {};
    KAIRO_TRY_ASSIGN(span, dev.allocate(bytes, what));
    return Status::success();
  };
  if (n_tokens > token_capacity_) {
    token_capacity_ = 0;  // until every buffer has grown: a failure leaves none that a later step trusts
    KAIRO_TRY_STATUS(grow(x, n_tokens * c.dim, "the residual stream (lower --max-num-batched-tokens)"));
    KAIRO_TRY_STATUS(grow(xn, n_tokens * c.dim, "the normed activations (lower --max-num-batched-tokens)"));
    KAIRO_TRY_STATUS(grow(q, n_tokens * c.q_dim(), "the queries (lower --max-num-batched-tokens)"));
    KAIRO_TRY_STATUS(grow(k, n_tokens * c.kv_dim(), "the keys (lower --max-num-batched-tokens)"));
    KAIRO_TRY_STATUS(grow(v, n_tokens * c.kv_dim(), "the values (lower --max-num-batched-tokens)"));
    KAIRO_TRY_STATUS(grow(attn, n_tokens * c.q_dim(), "the attention output (lower --max-num-batched-tokens)"));
    const int64_t rows = c.moe() ? n_tokens * c.n_experts_used : n_tokens;  // one per (token, expert) pair
    KAIRO_TRY_STATUS(grow(proj, rows * c.dim, "the projections (lower --max-num-batched-tokens)"));
    const int64_t ffn_width = c.moe() ? c.expert_ffn_dim : c.ffn_dim;
    KAIRO_TRY_STATUS(grow(gate, rows * ffn_width, "the FFN gate (lower --max-num-batched-tokens)"));
    KAIRO_TRY_STATUS(grow(up, rows * ffn_width, "the FFN up projection (lower --max-num-batched-tokens)"));
    if (c.moe()) {
      KAIRO_TRY_STATUS(grow(router, n_tokens * c.n_experts, "the router logits (lower --max-num-batched-tokens)"));
      KAIRO_TRY_STATUS(grow(moe_in, n_tokens * c.dim, "the experts' inputs (lower --max-num-batched-tokens)"));
    }
    token_capacity_ = n_tokens;
  }
  if (n_logits > logits_capacity_) {
    logits_capacity_ = 0;
    KAIRO_TRY_STATUS(grow(out_x, n_logits * c.dim, "the final hidden states (lower --max-num-seqs)"));
    if (!dev.host_memory())
      KAIRO_TRY_STATUS(grow(logits, n_logits * c.n_vocab, "the logits (lower --max-num-seqs)"));
    logits_capacity_ = n_logits;
  }
  return Status::success();
}

void StepBuffers::release() {
  for (DeviceSpan* s : {&x, &xn, &q, &k, &v, &attn, &proj, &gate, &up, &router, &moe_in, &out_x, &logits}) {
    if (!s->empty()) device_->free(*s);
    *s = {};
  }
  lora.release(*device_);
  token_capacity_ = logits_capacity_ = 0;
}

void decoder_forward(const ModelConfig& c, const ModelWeights& w, const Batch& batch, KvStorage& kv, StepBuffers& s,
                     std::vector<float>& logits, ThreadPool& pool, const lora::LoraSet* loras,
                     std::vector<float>* hidden) {
  kernels::Device& dev = s.device();
  const int64_t n = batch.n_tokens();
  const int64_t n_logits = static_cast<int64_t>(batch.logits_rows.size());
  if (Status st = s.reserve(c, n, n_logits); !st) throw StepOutOfMemory(st.error().message);
  logits.resize(static_cast<size_t>(n_logits * c.n_vocab));

  dev.begin_step(pool);
  // The batch description goes up once per step (on the CPU device: the host arrays themselves).
  const DeviceSpan token_ids = stage(dev, batch.token_ids);
  const DeviceSpan positions = stage(dev, batch.positions);
  const DeviceSpan slot_mapping = stage(dev, batch.slot_mapping);
  const DeviceSpan logits_rows = stage(dev, batch.logits_rows);
  const kernels::DeviceAttentionBatch attn_batch{n, positions, stage(dev, batch.seq_idx),
                                                 stage(dev, batch.block_tables), batch.max_blocks_per_seq};
  // The windowed layers' own tables, when their KV is a group of its own.
  const bool window_group = !batch.window_block_tables.empty();
  const DeviceSpan window_slots = window_group ? stage(dev, batch.window_slot_mapping) : slot_mapping;
  const DeviceSpan window_tables = window_group ? stage(dev, batch.window_block_tables) : attn_batch.block_tables;

  const lora::LoraStep lora_step(loras, batch.adapter_idx, c, dev, s.lora);
  using lora::LoraTarget;

  dev.get_rows(w.token_embd, token_ids, n, s.x);
  if (c.embed_scale > 0) dev.scale(s.x, n * c.dim, c.embed_scale);

  const float attn_scale = c.attn_scale > 0 ? c.attn_scale : 1.0f / std::sqrt(static_cast<float>(c.head_dim));

  for (int l = 0; l < c.n_layers; ++l) {
    const LayerWeights& L = w.layers[static_cast<size_t>(l)];
    kernels::RopeParams rope_q = c.layer_rope(l);
    rope_q.freq_factors = w.rope_freq_factors ? w.rope_freq_factors
                          : c.yarn_freq_factors.empty() ? nullptr
                                                        : c.yarn_freq_factors.data();
    kernels::RopeParams rope_k = rope_q;
    rope_k.n_heads = c.n_kv_heads;
    kernels::DeviceAttentionBatch layer_batch = attn_batch;
    layer_batch.window = c.layer_windowed(l) ? c.sliding_window : 0;
    const bool own_blocks = kv.windowed(l);
    assert(own_blocks == (window_group && c.layer_windowed(l)));
    if (own_blocks) layer_batch.block_tables = window_tables;
    layer_batch.softcap = c.attn_softcap;
    layer_batch.sinks = L.sinks;
    layer_batch.numerics = batch.numerics;
    // Attention block: x += Wo · attention(rope(Wq·norm(x)), K/V cache)
    dev.rms_norm(s.x, L.attn_norm, s.xn, n, c.dim, c.rms_eps);
    {
      const kernels::DeviceMatrix qkv[] = {L.wq, L.wk, L.wv};
      const DeviceSpan out[] = {s.q, s.k, s.v};
      dev.matmul(qkv, 3, s.xn, out, n, batch.numerics);
      const LoraTarget targets[] = {LoraTarget::Q, LoraTarget::K, LoraTarget::V};
      lora_step.apply(l, targets, 3, s.xn, c.dim, out, batch.numerics);
    }
    if (c.qkv_bias) {
      dev.add_bias(s.q, L.bq, n, c.q_dim());
      dev.add_bias(s.k, L.bk, n, c.kv_dim());
      dev.add_bias(s.v, L.bv, n, c.kv_dim());
    }
    if (c.qk_norm) {  // each head's row of Q and K normalised on its own: [n_tokens * heads, head_dim]
      dev.rms_norm(s.q, L.q_norm, s.q, n * c.n_heads, c.head_dim, c.rms_eps);
      dev.rms_norm(s.k, L.k_norm, s.k, n * c.n_kv_heads, c.head_dim, c.rms_eps);
    }
    dev.rope(s.q, positions, n, rope_q);
    dev.rope(s.k, positions, n, rope_k);
    const kernels::DeviceKvLayer kv_layer = kv.layer(l);
    dev.kv_write(kv_layer, own_blocks ? window_slots : slot_mapping, s.k, s.v, n);
    dev.attention(s.q, s.attn, kv_layer, layer_batch, c.n_heads, attn_scale);
    dev.matmul(&L.wo, 1, s.attn, &s.proj, n, batch.numerics);
    {
      const LoraTarget target = LoraTarget::O;
      lora_step.apply(l, &target, 1, s.attn, c.q_dim(), &s.proj, batch.numerics);
    }
    if (c.attn_output_bias) dev.add_bias(s.proj, L.bo, n, c.dim);
    add_to_residual(c, dev, s, L.post_attn_norm, n);

    // Feed-forward block on norm(x), dense or a mixture of experts.
    dev.rms_norm(s.x, L.ffn_norm, s.xn, n, c.dim, c.rms_eps);
    if (c.moe()) {
      moe_feed_forward(c, L, n, s, batch.numerics);
    } else {
      dense_feed_forward(c, L, l, n, s, lora_step, batch.numerics);
    }
  }

  // Only the rows that need logits pay for the final norm and the (large) output projection. A step may need none (a
  // prompt's middle chunks, embedding requests), and then its logits buffers may not exist yet.
  if (n_logits > 0) {
    dev.gather_rows(s.x, logits_rows, n_logits, c.dim, s.out_x);
    dev.rms_norm(s.out_x, w.output_norm, s.out_x, n_logits, c.dim, c.rms_eps);
    // A host-memory device writes the logits straight into the caller's vector; others bring down just these rows.
    const DeviceSpan logits_out = dev.host_memory() ? DeviceSpan{logits.data(), 0, 0} : s.logits;
    dev.matmul(&w.output, 1, s.out_x, &logits_out, n_logits, batch.numerics);
    if (!dev.host_memory()) dev.download(s.logits, logits.data(), logits.size() * kF32);
  }
  // Embedding rows: the normed input buffer is free once the last layer is done, and holds them.
  const int64_t n_hidden = static_cast<int64_t>(batch.hidden_rows.size());
  if (n_hidden > 0) {
    assert(hidden != nullptr && "a batch with hidden_rows needs somewhere to put them");
    hidden->resize(static_cast<size_t>(n_hidden * c.dim));
    dev.gather_rows(s.x, stage(dev, batch.hidden_rows), n_hidden, c.dim, s.xn);
    dev.rms_norm(s.xn, w.output_norm, s.xn, n_hidden, c.dim, c.rms_eps);
    dev.download(s.xn, hidden->data(), hidden->size() * kF32);
  }

  dev.end_step();
  if (c.final_softcap > 0) {  // on the host: only the sampled rows, once per step
    for (float& v : logits) v = c.final_softcap * std::tanh(v / c.final_softcap);
  }
}

}  // namespace kairo::model
