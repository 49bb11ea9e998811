#pragma once
// Builds GGUF bytes piece by piece so tests can write exactly the corruption they mean (the Writer only makes
// valid files).
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace kairo::gguf::testing {

class RawBuilder {
 public:
  template <typename T>
  RawBuilder& put(T v) {
    const size_t at = bytes.size();
    bytes.resize(at + sizeof(T));
    std::memcpy(bytes.data() + at, &v, sizeof(T));
    return *this;
  }
  RawBuilder& str(const std::string& s) {
    put<uint64_t>(s.size());
    bytes.insert(bytes.end(), s.begin(), s.end());
    return *this;
  }
  RawBuilder& header(uint64_t n_tensors, uint64_t n_kv, uint32_t version = 3) {
    return put<uint32_t>(0x46554747).put<uint32_t>(version).put<uint64_t>(n_tensors).put<uint64_t>(n_kv);
  }
  RawBuilder& kv_u32(const std::string& key, uint32_t v) { return str(key).put<uint32_t>(4).put<uint32_t>(v); }
  RawBuilder& kv_str(const std::string& key, const std::string& v) { return str(key).put<uint32_t>(8).str(v); }
  // A tensor info: name, dims, type, offset.
  RawBuilder& tensor(const std::string& name, const std::vector<uint64_t>& dims, uint32_t type, uint64_t offset) {
    str(name).put<uint32_t>(static_cast<uint32_t>(dims.size()));
    for (uint64_t d : dims) put<uint64_t>(d);
    return put<uint32_t>(type).put<uint64_t>(offset);
  }
  RawBuilder& pad(size_t alignment = 32) {
    while (bytes.size() % alignment) bytes.push_back(0);
    return *this;
  }
  RawBuilder& zeros(size_t n) {
    bytes.insert(bytes.end(), n, 0);
    return *this;
  }
  std::vector<uint8_t> bytes;
};

}  // namespace kairo::gguf::testing
