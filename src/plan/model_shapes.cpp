#include "plan/model_shapes.h"

#include "core/format.h"
#include "model/tensor_table.h"

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
  for (const model::TensorEntry& e : model::model_tensors(c)) {
    const bool f32 = e.form == model::TensorForm::F32 || e.written_f32;
    t.push_back({e.name, e.dims, f32 ? DType::F32 : matrix_type});
  }
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
