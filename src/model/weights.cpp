#include "model/weights.h"

#include <set>

#include "core/format.h"

namespace kairo::model {
namespace {

std::string dims_str(const std::vector<int64_t>& d) {
  std::string s = "[";
  for (size_t i = 0; i < d.size(); ++i) s += (i ? ", " : "") + std::to_string(d[i]);
  return s + "]";
}

class Binder {
 public:
  Binder(const gguf::File& f, ModelWeights& w) : f_(f), w_(w) {}

  Result<const gguf::TensorInfo*> find(const std::string& name, std::vector<int64_t> dims) {
    const gguf::TensorInfo* t = f_.find_tensor(name);
    if (!t) return Error{strprintf("%s: tensor '%s' is missing", f_.path().c_str(), name.c_str())};
    if (t->dims != dims) {
      return Error{strprintf("%s: tensor '%s' has shape %s, expected %s", f_.path().c_str(), name.c_str(),
                             dims_str(t->dims).c_str(), dims_str(dims).c_str())};
    }
    if (!dtype_info(t->type).supported) {
      return Error{strprintf("%s: tensor '%s' has type %s, which kairo cannot compute with yet (supported: F32, F16, "
                             "BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q4_K, Q5_K, Q6_K); requantize the model",
                             f_.path().c_str(), name.c_str(), std::string(dtype_name(t->type)).c_str())};
    }
    if (bound_.insert(name).second) {
      w_.n_bytes += t->n_bytes;
      w_.n_params += static_cast<uint64_t>(t->n_elements());
    }
    return t;
  }

  // A 1-D f32 vector (norm weights, biases).
  Result<VectorSpan> vec(const std::string& name, int64_t n) { return f32(name, {n}); }

  // An f32 tensor of these dims (a vector, or one bias vector per expert).
  Result<VectorSpan> f32(const std::string& name, std::vector<int64_t> dims) {
    KAIRO_TRY_ASSIGN(const gguf::TensorInfo* t, find(name, std::move(dims)));
    if (t->type != DType::F32) {
      return Error{strprintf("%s: tensor '%s' has type %s, expected F32", f_.path().c_str(), name.c_str(),
                             std::string(dtype_name(t->type)).c_str())};
    }
    if (reinterpret_cast<uintptr_t>(t->data) % alignof(float) != 0) {
      return Error{strprintf("%s: tensor '%s' data is not 4-byte aligned", f_.path().c_str(), name.c_str())};
    }
    return VectorSpan{const_cast<uint8_t*>(t->data), 0, 0};
  }

  // A matrix of n_rows outputs by n_cols inputs (GGUF dims [n_cols, n_rows]).
  Result<Matrix> mat(const std::string& name, int64_t n_rows, int64_t n_cols) {
    KAIRO_TRY_ASSIGN(const gguf::TensorInfo* t, find(name, {n_cols, n_rows}));
    return Matrix{kernels::MatrixView{t->type, t->data, n_rows, n_cols, row_bytes(t->type, n_cols)},
                  VectorSpan{const_cast<uint8_t*>(t->data), 0, 0}};
  }

  // A fused matrix whose rows are several matrices one after another (GGUF dims [n_cols, sum of rows]): one view
  // per part.
  Result<std::vector<Matrix>> split(const std::string& name, const std::vector<int64_t>& part_rows, int64_t n_cols) {
    int64_t total = 0;
    for (int64_t r : part_rows) total += r;
    KAIRO_TRY_ASSIGN(Matrix whole, mat(name, total, n_cols));
    std::vector<Matrix> out;
    const auto* data = static_cast<const uint8_t*>(whole.view.data);
    for (int64_t r : part_rows) {
      out.push_back(Matrix{kernels::MatrixView{whole.view.dtype, data, r, n_cols, whole.view.row_bytes},
                           VectorSpan{const_cast<uint8_t*>(data), 0, 0}});
      data += static_cast<size_t>(r) * whole.view.row_bytes;
    }
    return out;
  }

  // A stack of n_mats matrices of n_rows x n_cols (GGUF dims [n_cols, n_rows, n_mats]), one view per matrix.
  Result<std::vector<Matrix>> stack(const std::string& name, int64_t n_mats, int64_t n_rows, int64_t n_cols) {
    KAIRO_TRY_ASSIGN(const gguf::TensorInfo* t, find(name, {n_cols, n_rows, n_mats}));
    const size_t rb = row_bytes(t->type, n_cols);
    std::vector<Matrix> out;
    for (int64_t e = 0; e < n_mats; ++e) {
      const uint8_t* data = t->data + static_cast<size_t>(e) * static_cast<size_t>(n_rows) * rb;
      out.push_back(Matrix{kernels::MatrixView{t->type, data, n_rows, n_cols, rb},
                           VectorSpan{const_cast<uint8_t*>(data), 0, 0}});
    }
    return out;
  }

 private:
  const gguf::File& f_;
  ModelWeights& w_;
  std::set<std::string> bound_;

 public:
  // The first tensor of the file that was not bound, or "".
  std::string first_unbound() const {
    for (const gguf::TensorInfo& t : f_.tensors())
      if (!bound_.count(t.name)) return t.name;
    return "";
  }
};

}  // namespace

Result<ModelWeights> bind_weights(const gguf::File& file, const ModelConfig& c) {
  ModelWeights w;
  Binder b(file, w);
  KAIRO_TRY_ASSIGN(w.token_embd, b.mat("token_embd.weight", c.n_vocab, c.dim));
  KAIRO_TRY_ASSIGN(w.output_norm, b.vec("output_norm.weight", c.dim));
  if (c.tied_embeddings) {
    w.output = w.token_embd;
  } else {
    KAIRO_TRY_ASSIGN(w.output, b.mat("output.weight", c.n_vocab, c.dim));
  }
  if (file.find_tensor("rope_freqs.weight")) {
    if (!c.yarn_freq_factors.empty()) {
      return Error{strprintf("%s: the file has both a rope_freqs tensor and YaRN rope scaling; kairo applies one or "
                             "the other, not both",
                             file.path().c_str())};
    }
    KAIRO_TRY_ASSIGN(VectorSpan factors, b.vec("rope_freqs.weight", c.rope.n_rot / 2));
    w.rope_freq_factors = factors.host<const float>();
  }
  const bool has_long = file.find_tensor("rope_factors_long.weight") != nullptr;
  const bool has_short = file.find_tensor("rope_factors_short.weight") != nullptr;
  if (c.long_rope && (has_long || has_short)) {
    if (!has_long || !has_short || w.rope_freq_factors != nullptr || !c.yarn_freq_factors.empty() ||
        c.rope_original_context <= 0) {
      return Error{strprintf("%s: long-context rope needs both rope_factors_long and rope_factors_short, "
                             "%s.rope.scaling.original_context_length, and no other rope scaling (rope_freqs, YaRN); "
                             "the file has long %s, short %s, original context %lld",
                             file.path().c_str(), c.arch.c_str(), has_long ? "yes" : "no", has_short ? "yes" : "no",
                             static_cast<long long>(c.rope_original_context))};
    }
    KAIRO_TRY_ASSIGN(VectorSpan long_factors, b.vec("rope_factors_long.weight", c.rope.n_rot / 2));
    KAIRO_TRY_ASSIGN(VectorSpan short_factors, b.vec("rope_factors_short.weight", c.rope.n_rot / 2));
    w.rope_factors_long = long_factors.host<const float>();
    w.rope_factors_short = short_factors.host<const float>();
    w.rope_freq_factors = c.context_length > c.rope_original_context ? w.rope_factors_long : w.rope_factors_short;
  }
  w.layers.resize(static_cast<size_t>(c.n_layers));
  for (int l = 0; l < c.n_layers; ++l) {
    LayerWeights& L = w.layers[static_cast<size_t>(l)];
    const std::string p = "blk." + std::to_string(l) + ".";
    KAIRO_TRY_ASSIGN(L.attn_norm, b.vec(p + "attn_norm.weight", c.dim));
    if (c.fused_qkv) {
      KAIRO_TRY_ASSIGN(const std::vector<Matrix> qkv,
                       b.split(p + "attn_qkv.weight", {c.q_dim(), c.kv_dim(), c.kv_dim()}, c.dim));
      L.wq = qkv[0];
      L.wk = qkv[1];
      L.wv = qkv[2];
    } else {
      KAIRO_TRY_ASSIGN(L.wq, b.mat(p + "attn_q.weight", c.q_dim(), c.dim));
      KAIRO_TRY_ASSIGN(L.wk, b.mat(p + "attn_k.weight", c.kv_dim(), c.dim));
      KAIRO_TRY_ASSIGN(L.wv, b.mat(p + "attn_v.weight", c.kv_dim(), c.dim));
    }
    if (c.qkv_bias) {
      KAIRO_TRY_ASSIGN(L.bq, b.vec(p + "attn_q.bias", c.q_dim()));
      KAIRO_TRY_ASSIGN(L.bk, b.vec(p + "attn_k.bias", c.kv_dim()));
      KAIRO_TRY_ASSIGN(L.bv, b.vec(p + "attn_v.bias", c.kv_dim()));
    }
    if (c.qk_norm) {
      KAIRO_TRY_ASSIGN(L.q_norm, b.vec(p + "attn_q_norm.weight", c.head_dim));
      KAIRO_TRY_ASSIGN(L.k_norm, b.vec(p + "attn_k_norm.weight", c.head_dim));
    }
    KAIRO_TRY_ASSIGN(L.wo, b.mat(p + "attn_output.weight", c.dim, c.q_dim()));
    if (c.attn_output_bias) {
      KAIRO_TRY_ASSIGN(L.bo, b.vec(p + "attn_output.bias", c.dim));
    }
    if (c.attn_sinks) {
      KAIRO_TRY_ASSIGN(L.sinks, b.vec(p + "attn_sinks.weight", c.n_heads));
    }
    KAIRO_TRY_ASSIGN(L.ffn_norm, b.vec(p + c.ffn_norm_name + ".weight", c.dim));
    if (c.post_norms) {
      KAIRO_TRY_ASSIGN(L.post_attn_norm, b.vec(p + "post_attention_norm.weight", c.dim));
      KAIRO_TRY_ASSIGN(L.post_ffn_norm, b.vec(p + "post_ffw_norm.weight", c.dim));
    }
    if (c.moe()) {
      KAIRO_TRY_ASSIGN(L.router, b.mat(p + "ffn_gate_inp.weight", c.n_experts, c.dim));
      KAIRO_TRY_ASSIGN(L.exp_gate, b.stack(p + "ffn_gate_exps.weight", c.n_experts, c.expert_ffn_dim, c.dim));
      KAIRO_TRY_ASSIGN(L.exp_up, b.stack(p + "ffn_up_exps.weight", c.n_experts, c.expert_ffn_dim, c.dim));
      KAIRO_TRY_ASSIGN(L.exp_down, b.stack(p + "ffn_down_exps.weight", c.n_experts, c.dim, c.expert_ffn_dim));
      if (c.moe_biases) {
        KAIRO_TRY_ASSIGN(L.router_bias, b.vec(p + "ffn_gate_inp.bias", c.n_experts));
        KAIRO_TRY_ASSIGN(L.exp_gate_bias, b.f32(p + "ffn_gate_exps.bias", {c.expert_ffn_dim, c.n_experts}));
        KAIRO_TRY_ASSIGN(L.exp_up_bias, b.f32(p + "ffn_up_exps.bias", {c.expert_ffn_dim, c.n_experts}));
        KAIRO_TRY_ASSIGN(L.exp_down_bias, b.f32(p + "ffn_down_exps.bias", {c.dim, c.n_experts}));
      }
    } else if (c.fused_gate_up) {
      KAIRO_TRY_ASSIGN(const std::vector<Matrix> gate_up, b.split(p + "ffn_up.weight", {c.ffn_dim, c.ffn_dim}, c.dim));
      L.w_gate = gate_up[0];
      L.w_up = gate_up[1];
      KAIRO_TRY_ASSIGN(L.w_down, b.mat(p + "ffn_down.weight", c.dim, c.ffn_dim));
    } else {
      KAIRO_TRY_ASSIGN(L.w_gate, b.mat(p + "ffn_gate.weight", c.ffn_dim, c.dim));
      KAIRO_TRY_ASSIGN(L.w_up, b.mat(p + "ffn_up.weight", c.ffn_dim, c.dim));
      KAIRO_TRY_ASSIGN(L.w_down, b.mat(p + "ffn_down.weight", c.dim, c.ffn_dim));
    }
  }
  if (const std::string extra = b.first_unbound(); !extra.empty()) {
    return Error{strprintf("%s: tensor '%s' is not used by kairo's %s forward pass (a feature it does not implement "
                           "yet); running without it would give wrong outputs, so the model is refused",
                           file.path().c_str(), extra.c_str(), c.arch.c_str())};
  }
  return w;
}

}  // namespace kairo::model
