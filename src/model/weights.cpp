#include "model/weights.h"

#include <set>

#include "core/format.h"
#include "model/tensor_table.h"

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

  // A 1-D f32 vector (the rope factor tensors).
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

// Binds one tensor of the table into its slot.
Status bind(Binder& b, const TensorEntry& e, ModelWeights& w) {
  using S = TensorSlot;
  LayerWeights* L = e.layer >= 0 ? &w.layers[static_cast<size_t>(e.layer)] : nullptr;
  switch (e.form) {
    case TensorForm::F32: {
      KAIRO_TRY_ASSIGN(const VectorSpan v, b.f32(e.name, e.dims));
      switch (e.slot) {
        case S::OutputNorm: w.output_norm = v; break;
        case S::AttnNorm: L->attn_norm = v; break;
        case S::QBias: L->bq = v; break;
        case S::KBias: L->bk = v; break;
        case S::VBias: L->bv = v; break;
        case S::QNorm: L->q_norm = v; break;
        case S::KNorm: L->k_norm = v; break;
        case S::AttnOutputBias: L->bo = v; break;
        case S::Sinks: L->sinks = v; break;
        case S::FfnNorm: L->ffn_norm = v; break;
        case S::PostAttnNorm: L->post_attn_norm = v; break;
        case S::PostFfnNorm: L->post_ffn_norm = v; break;
        case S::RouterBias: L->router_bias = v; break;
        case S::ExpGateBias: L->exp_gate_bias = v; break;
        case S::ExpUpBias: L->exp_up_bias = v; break;
        case S::ExpDownBias: L->exp_down_bias = v; break;
        default: return Error{"internal: tensor table slot is not an f32 vector: " + e.name};
      }
      return Status::success();
    }
    case TensorForm::Matrix: {
      KAIRO_TRY_ASSIGN(const Matrix m, b.mat(e.name, e.dims[1], e.dims[0]));
      switch (e.slot) {
        case S::TokenEmbd: w.token_embd = m; break;
        case S::Output: w.output = m; break;
        case S::Q: L->wq = m; break;
        case S::K: L->wk = m; break;
        case S::V: L->wv = m; break;
        case S::AttnOutput: L->wo = m; break;
        case S::Gate: L->w_gate = m; break;
        case S::Up: L->w_up = m; break;
        case S::Down: L->w_down = m; break;
        case S::Router: L->router = m; break;
        default: return Error{"internal: tensor table slot is not a matrix: " + e.name};
      }
      return Status::success();
    }
    case TensorForm::Fused: {
      KAIRO_TRY_ASSIGN(const std::vector<Matrix> parts, b.split(e.name, e.parts, e.dims[0]));
      if (e.slot == S::Qkv) {
        L->wq = parts[0];
        L->wk = parts[1];
        L->wv = parts[2];
      } else if (e.slot == S::GateUp) {
        L->w_gate = parts[0];
        L->w_up = parts[1];
      } else {
        return Error{"internal: tensor table slot is not a fused matrix: " + e.name};
      }
      return Status::success();
    }
    case TensorForm::Stack: {
      KAIRO_TRY_ASSIGN(std::vector<Matrix> experts, b.stack(e.name, e.dims[2], e.dims[1], e.dims[0]));
      switch (e.slot) {
        case S::ExpGate: L->exp_gate = std::move(experts); break;
        case S::ExpUp: L->exp_up = std::move(experts); break;
        case S::ExpDown: L->exp_down = std::move(experts); break;
        default: return Error{"internal: tensor table slot is not an expert stack: " + e.name};
      }
      return Status::success();
    }
  }
  return Status::success();
}

}  // namespace

Result<ModelWeights> bind_weights(const gguf::File& file, const ModelConfig& c) {
  ModelWeights w;
  Binder b(file, w);
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
  for (const TensorEntry& e : model_tensors(c)) KAIRO_TRY_STATUS(bind(b, e, w));
  if (c.tied_embeddings) w.output = w.token_embd;
  if (const std::string extra = b.first_unbound(); !extra.empty()) {
    return Error{strprintf("%s: tensor '%s' is not used by kairo's %s forward pass (a feature it does not implement "
                           "yet); running without it would give wrong outputs, so the model is refused",
                           file.path().c_str(), extra.c_str(), c.arch.c_str())};
  }
  return w;
}

}  // namespace kairo::model
