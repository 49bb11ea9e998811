#pragma once
// GGUF v3 writer, used by tests and tools (synth, quantize) to make model files.
#include <cstdint>
#include <string>
#include <vector>

#include "core/result.h"
#include "gguf/value.h"
#include "tensor/dtype.h"

namespace kairo::gguf {

class Writer {
 public:
  explicit Writer(uint32_t alignment = 32) : alignment_(alignment) {}

  void set(const std::string& key, Value value);
  // dims in ggml order (dims[0] contiguous). `bytes` must hold exactly the tensor's byte size.
  void add_tensor(const std::string& name, DType type, std::vector<int64_t> dims, std::vector<uint8_t> bytes);

  // Serialises the whole file into memory.
  std::vector<uint8_t> to_bytes() const;
  Status write(const std::string& path) const;

 private:
  struct Tensor {
    std::string name;
    DType type;
    std::vector<int64_t> dims;
    std::vector<uint8_t> bytes;
  };
  uint32_t alignment_;
  std::vector<std::pair<std::string, Value>> kv_;
  std::vector<Tensor> tensors_;
};

}  // namespace kairo::gguf
