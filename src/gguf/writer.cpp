#include "gguf/writer.h"

#include <cstdio>
#include <cstring>

#include "core/format.h"
#include "gguf/gguf_file.h"

namespace kairo::gguf {
namespace {

class ByteSink {
 public:
  template <typename T>
  void put(T v) {
    const size_t at = out.size();
    out.resize(at + sizeof(T));
    std::memcpy(out.data() + at, &v, sizeof(T));
  }
  void put_string(const std::string& s) {
    put<uint64_t>(s.size());
    out.insert(out.end(), s.begin(), s.end());
  }
  void pad_to(uint64_t alignment) {
    while (out.size() % alignment != 0) out.push_back(0);
  }
  std::vector<uint8_t> out;
};

void put_value(ByteSink& sink, const Value& v) {
  switch (v.type()) {
    case ValueType::UINT8: sink.put<uint8_t>(static_cast<uint8_t>(*v.as_uint())); break;
    case ValueType::INT8: sink.put<int8_t>(static_cast<int8_t>(*v.as_int())); break;
    case ValueType::UINT16: sink.put<uint16_t>(static_cast<uint16_t>(*v.as_uint())); break;
    case ValueType::INT16: sink.put<int16_t>(static_cast<int16_t>(*v.as_int())); break;
    case ValueType::UINT32: sink.put<uint32_t>(static_cast<uint32_t>(*v.as_uint())); break;
    case ValueType::INT32: sink.put<int32_t>(static_cast<int32_t>(*v.as_int())); break;
    case ValueType::UINT64: sink.put<uint64_t>(*v.as_uint()); break;
    case ValueType::INT64: sink.put<int64_t>(*v.as_int()); break;
    case ValueType::FLOAT32: sink.put<float>(static_cast<float>(*v.as_float())); break;
    case ValueType::FLOAT64: sink.put<double>(*v.as_float()); break;
    case ValueType::BOOL: sink.put<uint8_t>(*v.as_bool() ? 1 : 0); break;
    case ValueType::STRING: sink.put_string(*v.as_string()); break;
    case ValueType::ARRAY:
      sink.put<uint32_t>(static_cast<uint32_t>(v.elem_type()));
      sink.put<uint64_t>(v.items().size());
      for (const Value& item : v.items()) put_value(sink, item);
      break;
  }
}

}  // namespace

void Writer::set(const std::string& key, Value value) {
  for (auto& kv : kv_) {
    if (kv.first == key) {
      kv.second = std::move(value);
      return;
    }
  }
  kv_.emplace_back(key, std::move(value));
}

void Writer::add_tensor(const std::string& name, DType type, std::vector<int64_t> dims, std::vector<uint8_t> bytes) {
  tensors_.push_back(Tensor{name, type, std::move(dims), std::move(bytes)});
}

std::vector<uint8_t> Writer::to_bytes() const {
  ByteSink sink;
  sink.put<uint32_t>(kMagic);
  sink.put<uint32_t>(3);
  sink.put<uint64_t>(tensors_.size());
  const bool has_alignment_key = alignment_ != kDefaultAlignment;
  sink.put<uint64_t>(kv_.size() + (has_alignment_key ? 1 : 0));
  for (const auto& [key, value] : kv_) {
    if (key == "general.alignment") continue;  // written from alignment_ below
    sink.put_string(key);
    sink.put<uint32_t>(static_cast<uint32_t>(value.type()));
    put_value(sink, value);
  }
  if (has_alignment_key) {
    sink.put_string("general.alignment");
    sink.put<uint32_t>(static_cast<uint32_t>(ValueType::UINT32));
    sink.put<uint32_t>(alignment_);
  }
  uint64_t offset = 0;
  for (const Tensor& t : tensors_) {
    sink.put_string(t.name);
    sink.put<uint32_t>(static_cast<uint32_t>(t.dims.size()));
    for (int64_t d : t.dims) sink.put<uint64_t>(static_cast<uint64_t>(d));
    sink.put<uint32_t>(static_cast<uint32_t>(t.type));
    sink.put<uint64_t>(offset);
    offset += (t.bytes.size() + alignment_ - 1) / alignment_ * alignment_;
  }
  sink.pad_to(alignment_);
  for (const Tensor& t : tensors_) {
    sink.out.insert(sink.out.end(), t.bytes.begin(), t.bytes.end());
    sink.pad_to(alignment_);
  }
  return std::move(sink.out);
}

Status Writer::write(const std::string& path) const {
  const std::vector<uint8_t> bytes = to_bytes();
  // Write to a temporary name and rename, so a crash never leaves a half-written model under the real name.
  const std::string tmp = path + ".tmp";
  FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) return Error{strprintf("%s: cannot create: %s", tmp.c_str(), std::strerror(errno))};
  const size_t n = std::fwrite(bytes.data(), 1, bytes.size(), f);
  const bool ok = n == bytes.size() && std::fflush(f) == 0;
  std::fclose(f);
  if (!ok || std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    return Error{strprintf("%s: write failed: %s", path.c_str(), std::strerror(errno))};
  }
  return {};
}

}  // namespace kairo::gguf
