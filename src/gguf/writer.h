#pragma once
// GGUF v3 writer, used by tests and tools (synth, quantize) to make model files.
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "core/result.h"
#include "gguf/value.h"
#include "tensor/dtype.h"

namespace kairo::gguf {

class TensorStream;

class Writer {
 public:
  explicit Writer(uint32_t alignment = 32) : alignment_(alignment) {}

  void set(const std::string& key, Value value);
  // dims in ggml order (dims[0] contiguous). `bytes` must hold exactly the tensor's byte size.
  void add_tensor(const std::string& name, DType type, std::vector<int64_t> dims, std::vector<uint8_t> bytes);

  // Serialises the whole file into memory. Precondition: no tensor was added with add_tensor_info().
  std::vector<uint8_t> to_bytes() const;
  Status write(const std::string& path) const;

  // Streaming mode, for files too large to hold in memory (a synthetic 8B model is several GB): declare a tensor
  // whose bytes come later. open_stream() writes the header (offsets follow from the declared types and shapes),
  // then the TensorStream takes the bytes of the declared tensors in order; tensors added with add_tensor() are
  // written by the stream itself when their turn comes. The Writer must outlive the stream.
  void add_tensor_info(const std::string& name, DType type, std::vector<int64_t> dims);
  Result<TensorStream> open_stream(const std::string& path) const;

 private:
  friend class TensorStream;
  struct Tensor {
    std::string name;
    DType type;
    std::vector<int64_t> dims;
    std::vector<uint8_t> bytes;
    uint64_t n_bytes = 0;
    bool streamed = false;  // bytes come through a TensorStream
  };
  std::vector<uint8_t> header_bytes() const;

  uint32_t alignment_;
  std::vector<std::pair<std::string, Value>> kv_;
  std::vector<Tensor> tensors_;
};

// The data section of a file being written by Writer::open_stream(). Writes go to PATH.tmp, renamed to PATH by
// finish(), so an interrupted run never leaves a truncated model under the real name.
class TensorStream {
 public:
  TensorStream(TensorStream&& other) noexcept;
  TensorStream& operator=(TensorStream&&) = delete;
  ~TensorStream();  // without a successful finish(): closes and removes the temporary file

  // Name of the streamed tensor whose bytes are expected next ("" when all are written).
  const std::string& current_tensor() const;
  // Appends bytes of the current streamed tensor; a chunk may not run past its end. Once the tensor is complete,
  // alignment padding and any following add_tensor() tensors are written.
  Status write(const void* data, size_t n_bytes);
  // Checks that every tensor was written in full, flushes and renames the file into place.
  Status finish();

 private:
  friend class Writer;
  TensorStream(const Writer& writer, std::string path, FILE* file);
  Status advance();  // pads the finished tensor and writes in-memory tensors up to the next streamed one
  Status put(const void* data, size_t n);

  const Writer* writer_;
  std::string path_;
  std::string tmp_path_;
  FILE* file_ = nullptr;
  size_t tensor_idx_ = 0;     // the tensor being written
  uint64_t written_ = 0;      // bytes of it so far
  uint64_t file_offset_ = 0;  // bytes written to the file
  std::vector<char> buffer_;  // stdio buffer: large writes of GB files
};

}  // namespace kairo::gguf
