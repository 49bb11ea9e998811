#pragma once
// The planner's view of a model's weights: names, shapes and types only, from a GGUF header (no weight is read) or
// generated from a shape preset. Everything the memory and roofline estimates need comes from this list.
#include <cstdint>
#include <string>
#include <vector>

#include "core/result.h"
#include "gguf/gguf_file.h"
#include "model/config.h"
#include "tensor/dtype.h"

namespace kairo::plan {

struct TensorSpec {
  std::string name;
  std::vector<int64_t> dims;  // ggml order: dims[0] is the row (contiguous) dimension
  DType type = DType::F32;

  int64_t n_elements() const;
  uint64_t n_bytes() const;   // n_elements / block_size * block_bytes
};

// The tensor infos of an opened GGUF file.
std::vector<TensorSpec> tensors_from_file(const gguf::File& file);

// The tensors a GGUF of this shape holds (model::model_tensors, the table weight binding reads too). Matrices get
// `matrix_type`, vectors and routers F32 -- as llama.cpp's converter writes them.
std::vector<TensorSpec> standard_tensors(const model::ModelConfig& config, DType matrix_type);

// "What if this model were stored as `type`": every 2-D tensor becomes `type`. A matrix whose rows are not a
// multiple of the type's block size falls back to Q8_0 (block 32), else F16, the way llama.cpp's quantizer does
// for odd widths (qwen2.5-0.5b has 896 columns, which is not a multiple of 256). 1-D tensors and routers stay F32.
std::vector<TensorSpec> retype_matrices(const std::vector<TensorSpec>& tensors, DType type);

// Parses a --weights-dtype value: a type kairo can compute with ("f16", "bf16", "q8_0", "q4_k", ...).
Result<DType> parse_weights_dtype(const std::string& name);
// Parses a --kv-dtype value: f16, bf16 or q8_0.
Result<DType> parse_kv_dtype(const std::string& name);

}  // namespace kairo::plan
