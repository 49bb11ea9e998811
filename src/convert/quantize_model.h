#pragma once
// `kairo quantize IN OUT TYPE`: rewrites a GGUF model with its matrices in another type. Metadata is copied (with
// general.file_type set), tensor types follow llama.cpp's rules for the scheme (see quant_scheme.h), the rows go
// through the reference quantizers (byte-exact with llama.cpp's), and the output streams tensor by tensor, so the
// result for a given input is the file llama-quantize writes, byte for byte.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "convert/quant_scheme.h"
#include "core/result.h"
#include "core/thread_pool.h"

namespace kairo::convert {

struct QuantizeOptions {
  QuantScheme scheme;
  bool pure = false;              // every matrix in scheme.base (see choose_tensor_types)
  bool allow_requantize = false;  // accept already-quantized matrices as input (dequantized first: lossy twice)
};

struct QuantizedTensor {
  std::string name;
  std::vector<int64_t> dims;
  DType from = DType::F32;
  DType to = DType::F32;
  uint64_t n_bytes = 0;  // in the output
};

struct QuantizeReport {
  std::vector<QuantizedTensor> tensors;  // in output order
  uint64_t in_bytes = 0;                 // file sizes
  uint64_t out_bytes = 0;
};

// on_tensor(t, index, count) is called before each tensor is written (progress output).
using TensorProgress = std::function<void(const QuantizedTensor&, size_t, size_t)>;

Result<QuantizeReport> quantize_model(const std::string& in_path, const std::string& out_path,
                                      const QuantizeOptions& options, ThreadPool& pool,
                                      const TensorProgress& on_tensor = {});

}  // namespace kairo::convert
