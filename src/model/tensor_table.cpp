#include "model/tensor_table.h"

namespace kairo::model {
namespace {

class TableBuilder {
 public:
  explicit TableBuilder(std::vector<TensorEntry>& out) : out_(out) {}
  void at_layer(int layer) {  // -1: the model's own tensors
    layer_ = layer;
    prefix_ = layer < 0 ? "" : "blk." + std::to_string(layer) + ".";
  }
  void vec(const std::string& name, std::vector<int64_t> dims, TensorSlot slot) {
    out_.push_back({prefix_ + name, std::move(dims), slot, TensorForm::F32, layer_, {}, false});
  }
  // A matrix of n_rows outputs by n_cols inputs.
  void mat(const std::string& name, int64_t n_rows, int64_t n_cols, TensorSlot slot, bool written_f32 = false) {
    out_.push_back({prefix_ + name, {n_cols, n_rows}, slot, TensorForm::Matrix, layer_, {}, written_f32});
  }
  void fused(const std::string& name, std::vector<int64_t> parts, int64_t n_cols, TensorSlot slot) {
    int64_t rows = 0;
    for (int64_t r : parts) rows += r;
    out_.push_back({prefix_ + name, {n_cols, rows}, slot, TensorForm::Fused, layer_, std::move(parts), false});
  }
  void stack(const std::string& name, int64_t n_mats, int64_t n_rows, int64_t n_cols, TensorSlot slot) {
    out_.push_back({prefix_ + name, {n_cols, n_rows, n_mats}, slot, TensorForm::Stack, layer_, {}, false});
  }

 private:
  std::vector<TensorEntry>& out_;
  int layer_ = -1;
  std::string prefix_;
};

}  // namespace

std::vector<TensorEntry> model_tensors(const ModelConfig& c) {
  using S = TensorSlot;
  std::vector<TensorEntry> out;
  TableBuilder t(out);
  const int64_t dim = c.dim, q = c.q_dim(), kv = c.kv_dim(), ffn = c.ffn_dim;
  t.mat("token_embd.weight", c.n_vocab, dim, S::TokenEmbd);
  for (int l = 0; l < c.n_layers; ++l) {
    t.at_layer(l);
    t.vec("attn_norm.weight", {dim}, S::AttnNorm);
    if (c.fused_qkv) {
      t.fused("attn_qkv.weight", {q, kv, kv}, dim, S::Qkv);
    } else {
      t.mat("attn_q.weight", q, dim, S::Q);
      t.mat("attn_k.weight", kv, dim, S::K);
      t.mat("attn_v.weight", kv, dim, S::V);
    }
    if (c.qkv_bias) {
      t.vec("attn_q.bias", {q}, S::QBias);
      t.vec("attn_k.bias", {kv}, S::KBias);
      t.vec("attn_v.bias", {kv}, S::VBias);
    }
    if (c.qk_norm) {
      t.vec("attn_q_norm.weight", {c.head_dim}, S::QNorm);
      t.vec("attn_k_norm.weight", {c.head_dim}, S::KNorm);
    }
    t.mat("attn_output.weight", dim, q, S::AttnOutput);
    if (c.attn_output_bias) t.vec("attn_output.bias", {dim}, S::AttnOutputBias);
    if (c.attn_sinks) t.vec("attn_sinks.weight", {c.n_heads}, S::Sinks);
    t.vec(c.ffn_norm_name + ".weight", {dim}, S::FfnNorm);
    if (c.post_norms) {
      t.vec("post_attention_norm.weight", {dim}, S::PostAttnNorm);
      t.vec("post_ffw_norm.weight", {dim}, S::PostFfnNorm);
    }
    if (c.moe()) {
      const int64_t experts = c.n_experts, width = c.expert_ffn_dim;
      t.mat("ffn_gate_inp.weight", experts, dim, S::Router, /*written_f32=*/true);
      t.stack("ffn_gate_exps.weight", experts, width, dim, S::ExpGate);
      t.stack("ffn_up_exps.weight", experts, width, dim, S::ExpUp);
      t.stack("ffn_down_exps.weight", experts, dim, width, S::ExpDown);
      if (c.moe_biases) {
        t.vec("ffn_gate_inp.bias", {experts}, S::RouterBias);
        t.vec("ffn_gate_exps.bias", {width, experts}, S::ExpGateBias);
        t.vec("ffn_up_exps.bias", {width, experts}, S::ExpUpBias);
        t.vec("ffn_down_exps.bias", {dim, experts}, S::ExpDownBias);
      }
    } else if (c.fused_gate_up) {
      t.fused("ffn_up.weight", {ffn, ffn}, dim, S::GateUp);
      t.mat("ffn_down.weight", dim, ffn, S::Down);
    } else {
      t.mat("ffn_gate.weight", ffn, dim, S::Gate);
      t.mat("ffn_up.weight", ffn, dim, S::Up);
      t.mat("ffn_down.weight", dim, ffn, S::Down);
    }
  }
  t.at_layer(-1);
  t.vec("output_norm.weight", {dim}, S::OutputNorm);
  if (!c.tied_embeddings) t.mat("output.weight", c.n_vocab, dim, S::Output);
  return out;
}

}  // namespace kairo::model
