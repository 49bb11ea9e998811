#include "plan/model_shapes.h"

#include "core/format.h"

namespace kairo::plan {

int64_t TensorSpec::n_elements() const {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

uint64_t TensorSpec::n_bytes() const {
  const DTypeInfo& info = dtype_info(type);
  return static_cast<uint64_t>(n_elements() / info.block_size * info.block_bytes);
}

std::vector<TensorSpec> tensors_from_file(const gguf::File& file) {
  std::vector<TensorSpec> out;
  out.reserve(file.tensors().size());
  for (const auto& t : file.tensors()) out.push_back({t.name, t.dims, t.type});
  return out;
}

std::vector<TensorSpec> standard_tensors(const model::ModelConfig& c, DType matrix_type) {
  std::vector<TensorSpec> t;
  const int64_t dim = c.dim, q = c.q_dim(), kv = c.kv_dim(), ffn = c.ffn_dim, vocab = c.n_vocab;
  t.push_back({"token_embd.weight", {dim, vocab}, matrix_type});
  for (int l = 0; l < c.n_layers; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    t.push_back({p + "attn_norm.weight", {dim}, DType::F32});
    if (c.fused_qkv) {
      t.push_back({p + "attn_qkv.weight", {dim, q + 2 * kv}, matrix_type});
    } else {
      t.push_back({p + "attn_q.weight", {dim, q}, matrix_type});
      t.push_back({p + "attn_k.weight", {dim, kv}, matrix_type});
      t.push_back({p + "attn_v.weight", {dim, kv}, matrix_type});
    }
    if (c.qkv_bias) {
      t.push_back({p + "attn_q.bias", {q}, DType::F32});
      t.push_back({p + "attn_k.bias", {kv}, DType::F32});
      t.push_back({p + "attn_v.bias", {kv}, DType::F32});
    }
    if (c.qk_norm) {
      t.push_back({p + "attn_q_norm.weight", {c.head_dim}, DType::F32});
      t.push_back({p + "attn_k_norm.weight", {c.head_dim}, DType::F32});
    }
    t.push_back({p + "attn_output.weight", {q, dim}, matrix_type});
    if (c.attn_output_bias) t.push_back({p + "attn_output.bias", {dim}, DType::F32});
    if (c.attn_sinks) t.push_back({p + "attn_sinks.weight", {c.n_heads}, DType::F32});
    t.push_back({p + c.ffn_norm_name + ".weight", {dim}, DType::F32});
    if (c.post_norms) {
      t.push_back({p + "post_attention_norm.weight", {dim}, DType::F32});
      t.push_back({p + "post_ffw_norm.weight", {dim}, DType::F32});
    }
    if (c.moe()) {
      const int64_t experts = c.n_experts, width = c.expert_ffn_dim;
      t.push_back({p + "ffn_gate_inp.weight", {dim, experts}, DType::F32});  // the router stays F32
      t.push_back({p + "ffn_gate_exps.weight", {dim, width, experts}, matrix_type});
      t.push_back({p + "ffn_up_exps.weight", {dim, width, experts}, matrix_type});
      t.push_back({p + "ffn_down_exps.weight", {width, dim, experts}, matrix_type});
      if (c.moe_biases) {
        t.push_back({p + "ffn_gate_inp.bias", {experts}, DType::F32});
        t.push_back({p + "ffn_gate_exps.bias", {width, experts}, DType::F32});
        t.push_back({p + "ffn_up_exps.bias", {width, experts}, DType::F32});
        t.push_back({p + "ffn_down_exps.bias", {dim, experts}, DType::F32});
      }
    } else if (c.fused_gate_up) {
      t.push_back({p + "ffn_up.weight", {dim, 2 * ffn}, matrix_type});
      t.push_back({p + "ffn_down.weight", {ffn, dim}, matrix_type});
    } else {
      t.push_back({p + "ffn_gate.weight", {dim, ffn}, matrix_type});
      t.push_back({p + "ffn_up.weight", {dim, ffn}, matrix_type});
      t.push_back({p + "ffn_down.weight", {ffn, dim}, matrix_type});
    }
  }
  t.push_back({"output_norm.weight", {dim}, DType::F32});
  if (!c.tied_embeddings) t.push_back({"output.weight", {dim, vocab}, matrix_type});
  return retype_matrices(t, matrix_type);  // applies the odd-width fallback
}

std::vector<TensorSpec> retype_matrices(const std::vector<TensorSpec>& tensors, DType type) {
  std::vector<TensorSpec> out = tensors;
  for (auto& t : out) {
    const bool is_bias = t.name.size() > 5 && t.name.compare(t.name.size() - 5, 5, ".bias") == 0;
    if (t.dims.size() < 2 || is_bias || t.name.find("ffn_gate_inp") != std::string::npos) continue;  // stay F32
    DType chosen = type;
    if (t.dims[0] % dtype_info(chosen).block_size != 0) chosen = DType::Q8_0;
    if (t.dims[0] % dtype_info(chosen).block_size != 0) chosen = DType::F16;
    t.type = chosen;
  }
  return out;
}

Result<DType> parse_weights_dtype(const std::string& name) {
  const auto t = dtype_from_name(name);
  if (!t || !dtype_info(*t).supported) {
    return Error{strprintf("--weights-dtype %s is not a type kairo computes with; use one of f32, f16, bf16, q8_0, "
                           "q4_0, q4_1, q5_0, q5_1, q4_k, q5_k, q6_k, mxfp4",
                           quote_for_error(name).c_str())};
  }
  return *t;
}

Result<DType> parse_kv_dtype(const std::string& name) {
  const auto t = dtype_from_name(name);
  if (!t || (*t != DType::F16 && *t != DType::BF16 && *t != DType::Q8_0)) {
    return Error{strprintf("--kv-dtype %s is not supported; use f16 (default), bf16 or q8_0",
                           quote_for_error(name).c_str())};
  }
  return *t;
}

}  // namespace kairo::plan
