#pragma once
// Bounds-checked GGUF (v2, v3) reader. Every count, length and offset read from the file is checked against the
// bytes that remain and against overflow before it is used, so a corrupt or hostile file produces an Error naming
// the file, the byte offset and what is wrong -- never a crash, a huge allocation or a hang.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/mapped_file.h"
#include "core/result.h"
#include "gguf/value.h"
#include "tensor/dtype.h"

namespace kairo::gguf {

inline constexpr uint32_t kMagic = 0x46554747;  // "GGUF" little-endian
inline constexpr uint32_t kDefaultAlignment = 32;
inline constexpr int kMaxDims = 4;

// Limits on sizes a file controls; a file beyond them is rejected before anything is allocated.
struct ReadLimits {
  uint64_t max_tensors = 1u << 20;
  uint64_t max_kv = 1u << 20;
  uint64_t max_string_bytes = 1u << 26;      // 64 MiB (chat templates are large, but not that large)
  uint64_t max_array_items = 1u << 24;       // 16M: vocab/merges arrays of the largest tokenizers fit
  uint64_t max_name_bytes = 1u << 16;
  int max_array_depth = 2;
};

struct TensorInfo {
  std::string name;
  std::vector<int64_t> dims;   // ggml order: dims[0] is the contiguous (row) dimension
  DType type = DType::F32;
  uint64_t offset = 0;         // relative to the start of the data section
  uint64_t n_bytes = 0;
  const uint8_t* data = nullptr;  // into the mapping (or buffer)

  int64_t n_elements() const;
  int64_t n_rows() const { return dims.empty() ? 1 : n_elements() / dims[0]; }
};

class File {
 public:
  static Result<File> open(const std::string& path, const ReadLimits& limits = {});
  // Parses a buffer in memory (fuzzing, tests). `name` is used in error messages. The buffer must outlive the File.
  static Result<File> parse(const uint8_t* data, size_t size, const std::string& name, const ReadLimits& limits = {});

  const std::string& path() const { return path_; }
  uint32_t version() const { return version_; }
  uint64_t alignment() const { return alignment_; }
  uint64_t data_offset() const { return data_offset_; }
  uint64_t file_size() const { return size_; }

  // Metadata in file order, and lookup by key.
  const std::vector<std::pair<std::string, Value>>& metadata() const { return kv_; }
  const Value* find(const std::string& key) const;

  // Typed metadata getters: an Error names the key and what was found when the type does not fit.
  Result<std::string> get_string(const std::string& key) const;
  Result<uint64_t> get_uint(const std::string& key) const;
  Result<double> get_float(const std::string& key) const;
  // Same, but a default when the key is absent (still an Error when present with the wrong type).
  Result<uint64_t> get_uint_or(const std::string& key, uint64_t fallback) const;
  Result<double> get_float_or(const std::string& key, double fallback) const;
  Result<bool> get_bool_or(const std::string& key, bool fallback) const;
  Result<std::string> get_string_or(const std::string& key, const std::string& fallback) const;

  const std::vector<TensorInfo>& tensors() const { return tensors_; }
  const TensorInfo* find_tensor(const std::string& name) const;

  // Tensor bytes copied elsewhere: drop them from this process's resident memory (MappedFile::release_pages).
  // No-op for files parsed from memory.
  void release_pages(const void* p, size_t n) const {
    if (mapping_) mapping_->release_pages(p, n);
  }

 private:
  std::shared_ptr<MappedFile> mapping_;  // keeps data alive when opened from a path
  std::string path_;
  uint32_t version_ = 0;
  uint64_t alignment_ = kDefaultAlignment;
  uint64_t data_offset_ = 0;
  uint64_t size_ = 0;
  std::vector<std::pair<std::string, Value>> kv_;
  std::map<std::string, size_t> kv_index_;
  std::vector<TensorInfo> tensors_;
  std::map<std::string, size_t> tensor_index_;

  friend class Parser;
};

}  // namespace kairo::gguf
