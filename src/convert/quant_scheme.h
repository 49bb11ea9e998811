#pragma once
// Which type each tensor of a model gets when it is written as "Q4_K_M", "Q8_0", ...: llama.cpp's rules
// (llama_tensor_get_type in src/llama-quant.cpp, release b4748) for the schemes kairo writes, so `kairo quantize` and
// `kairo synth` give files with the same tensor types as llama-quantize -- the comparisons in BASELINES.md are
// then like for like. Pure bookkeeping on names and shapes; no tensor data is touched here.
#include <cstdint>
#include <string>
#include <vector>

#include "core/result.h"
#include "tensor/dtype.h"

namespace kairo::convert {

// llama.cpp's llama_ftype ids: the value of general.file_type.
enum class FileType : uint32_t {
  AllF32 = 0, F16 = 1, Q4_0 = 2, Q4_1 = 3, Q8_0 = 7, Q5_0 = 8, Q5_1 = 9,
  Q4_K_S = 14, Q4_K_M = 15, Q5_K_S = 16, Q5_K_M = 17, Q6_K = 18, BF16 = 32, MXFP4_MOE = 38,
};

struct QuantScheme {
  std::string name;     // canonical: "Q4_K_M", "F16"
  FileType file_type;
  DType base;           // the type most matrices get
};

// Parses a scheme name, case-insensitive: F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q6_K, Q4_K_S, Q4_K_M,
// Q5_K_S, Q5_K_M, MXFP4_MOE (expert stacks in MXFP4, every other matrix in Q8_0, as llama.cpp's ftype of
// that name); Q4_K and Q5_K are aliases for Q4_K_M and Q5_K_M, as in llama-quantize (use `pure` for a file with
// every matrix in Q4_K).
Result<QuantScheme> parse_quant_scheme(const std::string& name);
// "F32, F16, BF16, Q8_0, ..." for help texts and errors.
std::string quant_scheme_names();

// A tensor as the rules see it: name, shape (ggml order) and its current type.
struct TensorDesc {
  std::string name;
  std::vector<int64_t> dims;
  DType type = DType::F32;
};

// Model facts some rules depend on.
struct ModelFacts {
  std::string arch;     // general.architecture
  int n_layers = 0;     // <arch>.block_count
  int n_heads = 0;
  int n_kv_heads = 0;
};

// llama.cpp's processing order, which the layer-position rules count in and which llama-quantize writes the output
// file in: tensors outside blocks first, then block by block (numerically), by name within each group.
std::vector<size_t> quantize_order(const std::vector<TensorDesc>& tensors);

// False for tensors that are never quantized: vectors (norms, biases), *_norm.weight, names not ending in "weight".
bool tensor_allows_quantization(const TensorDesc& t);

// The type each tensor gets, indexed like `tensors`. Tensors that may not be quantized keep their type. With `pure`
// every quantizable matrix gets scheme.base (no higher-precision output / attn_v / ffn_down), except where its row
// length forces a fallback: a row must be a whole number of blocks (Q4_K -> Q5_0, Q5_K -> Q5_1, Q6_K -> Q8_0, then
// F16), as llama.cpp does for e.g. qwen2.5-0.5b's 896-wide rows.
std::vector<DType> choose_tensor_types(const std::vector<TensorDesc>& tensors, const QuantScheme& scheme,
                                       const ModelFacts& facts, bool pure = false);

}  // namespace kairo::convert
