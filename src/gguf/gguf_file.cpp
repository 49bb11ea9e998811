#include "gguf/gguf_file.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "core/format.h"

namespace kairo::gguf {

int64_t TensorInfo::n_elements() const {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;  // validated against overflow at parse time
  return n;
}

// Reads the file front to back with a cursor; every read is checked against the bytes that remain.
class Parser {
 public:
  Parser(const uint8_t* data, size_t size, const std::string& name, const ReadLimits& limits)
      : data_(data), size_(size), name_(name), limits_(limits) {}

  Result<File> parse();

 private:
  Error fail(uint64_t at, const std::string& what) const {
    return Error{strprintf("%s: offset %llu: %s", name_.c_str(), static_cast<unsigned long long>(at), what.c_str())};
  }
  uint64_t remaining() const { return size_ - pos_; }

  template <typename T>
  Result<T> read_scalar(const char* what) {
    if (remaining() < sizeof(T)) {
      return fail(pos_, strprintf("file ends while reading %s (needs %zu bytes, %llu left); the file is truncated",
                                  what, sizeof(T), static_cast<unsigned long long>(remaining())));
    }
    T v;
    std::memcpy(&v, data_ + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }

  Result<uint64_t> read_count(const char* what) {
    if (version_ == 1) {
      KAIRO_TRY_ASSIGN(const uint32_t v, read_scalar<uint32_t>(what));
      return uint64_t{v};
    }
    return read_scalar<uint64_t>(what);
  }

  Result<std::string> read_string(const char* what, uint64_t max_bytes) {
    const uint64_t at = pos_;
    KAIRO_TRY_ASSIGN(const uint64_t len, read_count(what));
    if (len > max_bytes) {
      return fail(at, strprintf("%s length %llu exceeds the limit of %llu bytes", what,
                                static_cast<unsigned long long>(len), static_cast<unsigned long long>(max_bytes)));
    }
    if (len > remaining()) {
      return fail(at, strprintf("%s length %llu is beyond the end of the file (%llu bytes left)", what,
                                static_cast<unsigned long long>(len), static_cast<unsigned long long>(remaining())));
    }
    std::string s(reinterpret_cast<const char*>(data_ + pos_), static_cast<size_t>(len));
    pos_ += len;
    return s;
  }

  Result<Value> read_value(ValueType type, const std::string& key, int depth);
  Status read_metadata(File& file, uint64_t n_kv);
  Status read_tensor_infos(File& file, uint64_t n_tensors);
  Status place_tensors(File& file);

  const uint8_t* data_;
  size_t size_;
  std::string name_;
  ReadLimits limits_;
  uint64_t pos_ = 0;
  uint32_t version_ = 0;
};

static uint64_t min_encoded_size(ValueType t) {
  switch (t) {
    case ValueType::UINT8: case ValueType::INT8: case ValueType::BOOL: return 1;
    case ValueType::UINT16: case ValueType::INT16: return 2;
    case ValueType::UINT32: case ValueType::INT32: case ValueType::FLOAT32: return 4;
    case ValueType::UINT64: case ValueType::INT64: case ValueType::FLOAT64: return 8;
    case ValueType::STRING: return 8;          // length prefix
    case ValueType::ARRAY: return 4 + 8;       // element type + count
  }
  return 1;
}

Result<Value> Parser::read_value(ValueType type, const std::string& key, int depth) {
  switch (type) {
    case ValueType::UINT8: { KAIRO_TRY_ASSIGN(auto v, read_scalar<uint8_t>("a uint8 value")); return Value::uint(type, v); }
    case ValueType::INT8: { KAIRO_TRY_ASSIGN(auto v, read_scalar<int8_t>("an int8 value")); return Value::sint(type, v); }
    case ValueType::UINT16: { KAIRO_TRY_ASSIGN(auto v, read_scalar<uint16_t>("a uint16 value")); return Value::uint(type, v); }
    case ValueType::INT16: { KAIRO_TRY_ASSIGN(auto v, read_scalar<int16_t>("an int16 value")); return Value::sint(type, v); }
    case ValueType::UINT32: { KAIRO_TRY_ASSIGN(auto v, read_scalar<uint32_t>("a uint32 value")); return Value::uint(type, v); }
    case ValueType::INT32: { KAIRO_TRY_ASSIGN(auto v, read_scalar<int32_t>("an int32 value")); return Value::sint(type, v); }
    case ValueType::UINT64: { KAIRO_TRY_ASSIGN(auto v, read_scalar<uint64_t>("a uint64 value")); return Value::uint(type, v); }
    case ValueType::INT64: { KAIRO_TRY_ASSIGN(auto v, read_scalar<int64_t>("an int64 value")); return Value::sint(type, v); }
    case ValueType::FLOAT32: { KAIRO_TRY_ASSIGN(auto v, read_scalar<float>("a float32 value")); return Value::real(type, v); }
    case ValueType::FLOAT64: { KAIRO_TRY_ASSIGN(auto v, read_scalar<double>("a float64 value")); return Value::real(type, v); }
    case ValueType::BOOL: {
      const uint64_t at = pos_;
      KAIRO_TRY_ASSIGN(auto v, read_scalar<uint8_t>("a bool value"));
      if (v > 1) return fail(at, strprintf("key '%s': bool value is %u, expected 0 or 1", key.c_str(), v));
      return Value::boolean(v != 0);
    }
    case ValueType::STRING: {
      KAIRO_TRY_ASSIGN(auto s, read_string("string value", limits_.max_string_bytes));
      return Value::string(std::move(s));
    }
    case ValueType::ARRAY: {
      const uint64_t at = pos_;
      KAIRO_TRY_ASSIGN(const uint32_t raw_elem, read_scalar<uint32_t>("an array element type"));
      if (raw_elem >= kValueTypeCount) {
        return fail(at, strprintf("key '%s': array element type %u is not a GGUF value type (0..12)", key.c_str(),
                                  raw_elem));
      }
      const auto elem = static_cast<ValueType>(raw_elem);
      if (elem == ValueType::ARRAY && depth + 1 >= limits_.max_array_depth) {
        return fail(at, strprintf("key '%s': arrays nested deeper than %d levels", key.c_str(),
                                  limits_.max_array_depth));
      }
      const uint64_t count_at = pos_;
      KAIRO_TRY_ASSIGN(const uint64_t count, read_count("an array length"));
      if (count > limits_.max_array_items) {
        return fail(count_at, strprintf("key '%s': array length %llu exceeds the limit of %llu items", key.c_str(),
                                        static_cast<unsigned long long>(count),
                                        static_cast<unsigned long long>(limits_.max_array_items)));
      }
      // Reject before allocating: every element takes at least min_encoded_size bytes.
      if (count > remaining() / min_encoded_size(elem)) {
        return fail(count_at, strprintf("key '%s': array of %llu %s elements cannot fit in the %llu bytes left",
                                        key.c_str(), static_cast<unsigned long long>(count), value_type_name(elem),
                                        static_cast<unsigned long long>(remaining())));
      }
      std::vector<Value> items;
      items.reserve(static_cast<size_t>(count));
      for (uint64_t i = 0; i < count; ++i) {
        KAIRO_TRY_ASSIGN(Value v, read_value(elem, key, depth + 1));
        items.push_back(std::move(v));
      }
      return Value::array(elem, std::move(items));
    }
  }
  return fail(pos_, "unreachable value type");
}

Status Parser::read_metadata(File& file, uint64_t n_kv) {
  file.kv_.reserve(static_cast<size_t>(n_kv));
  for (uint64_t i = 0; i < n_kv; ++i) {
    const uint64_t key_at = pos_;
    KAIRO_TRY_ASSIGN(std::string key, read_string("metadata key", limits_.max_name_bytes));
    if (key.empty()) return fail(key_at, strprintf("metadata key #%llu is empty", static_cast<unsigned long long>(i)));
    if (file.kv_index_.count(key)) return fail(key_at, strprintf("duplicate metadata key '%s'", key.c_str()));
    const uint64_t type_at = pos_;
    KAIRO_TRY_ASSIGN(const uint32_t raw_type, read_scalar<uint32_t>("a metadata value type"));
    if (raw_type >= kValueTypeCount) {
      return fail(type_at, strprintf("key '%s': value type %u is not a GGUF value type (0..12)", key.c_str(), raw_type));
    }
    KAIRO_TRY_ASSIGN(Value value, read_value(static_cast<ValueType>(raw_type), key, 0));
    file.kv_index_[key] = file.kv_.size();
    file.kv_.emplace_back(std::move(key), std::move(value));
  }
  return {};
}

Status Parser::read_tensor_infos(File& file, uint64_t n_tensors) {
  file.tensors_.reserve(static_cast<size_t>(n_tensors));
  for (uint64_t i = 0; i < n_tensors; ++i) {
    const uint64_t info_at = pos_;
    KAIRO_TRY_ASSIGN(std::string name, read_string("tensor name", limits_.max_name_bytes));
    if (name.empty()) return fail(info_at, strprintf("tensor #%llu has an empty name", static_cast<unsigned long long>(i)));
    if (file.tensor_index_.count(name)) return fail(info_at, strprintf("duplicate tensor '%s'", name.c_str()));
    const uint64_t dims_at = pos_;
    KAIRO_TRY_ASSIGN(const uint32_t n_dims, read_scalar<uint32_t>("a tensor's dimension count"));
    if (n_dims == 0 || n_dims > static_cast<uint32_t>(kMaxDims)) {
      return fail(dims_at, strprintf("tensor '%s': %u dimensions, expected 1 to %d", name.c_str(), n_dims, kMaxDims));
    }
    TensorInfo t;
    t.name = std::move(name);
    int64_t n_elements = 1;
    for (uint32_t d = 0; d < n_dims; ++d) {
      const uint64_t dim_at = pos_;
      KAIRO_TRY_ASSIGN(const uint64_t dim, read_count("a tensor dimension"));
      if (dim == 0 || dim > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        return fail(dim_at, strprintf("tensor '%s': dimension %u is %llu, expected 1 to 2^63-1", t.name.c_str(), d,
                                      static_cast<unsigned long long>(dim)));
      }
      if (static_cast<int64_t>(dim) > std::numeric_limits<int64_t>::max() / n_elements) {
        return fail(dim_at, strprintf("tensor '%s': element count overflows 64 bits", t.name.c_str()));
      }
      n_elements *= static_cast<int64_t>(dim);
      t.dims.push_back(static_cast<int64_t>(dim));
    }
    const uint64_t type_at = pos_;
    KAIRO_TRY_ASSIGN(const uint32_t raw_type, read_scalar<uint32_t>("a tensor type"));
    const auto info = dtype_info(raw_type);
    if (!info) {
      return fail(type_at, strprintf("tensor '%s': type %u is not a known GGML tensor type", t.name.c_str(), raw_type));
    }
    t.type = static_cast<DType>(raw_type);
    if (t.dims[0] % info->block_size != 0) {
      return fail(dims_at, strprintf("tensor '%s': row length %lld is not a multiple of the %.*s block size %lld",
                                     t.name.c_str(), static_cast<long long>(t.dims[0]),
                                     static_cast<int>(info->name.size()), info->name.data(),
                                     static_cast<long long>(info->block_size)));
    }
    const uint64_t n_blocks = static_cast<uint64_t>(n_elements / info->block_size);
    if (n_blocks > std::numeric_limits<uint64_t>::max() / static_cast<uint64_t>(info->block_bytes)) {
      return fail(dims_at, strprintf("tensor '%s': byte size overflows 64 bits", t.name.c_str()));
    }
    t.n_bytes = n_blocks * static_cast<uint64_t>(info->block_bytes);
    const uint64_t offset_at = pos_;
    KAIRO_TRY_ASSIGN(t.offset, read_scalar<uint64_t>("a tensor data offset"));
    if (t.offset % file.alignment_ != 0) {
      return fail(offset_at, strprintf("tensor '%s': data offset %llu is not a multiple of the alignment %llu",
                                       t.name.c_str(), static_cast<unsigned long long>(t.offset),
                                       static_cast<unsigned long long>(file.alignment_)));
    }
    file.tensor_index_[t.name] = file.tensors_.size();
    file.tensors_.push_back(std::move(t));
  }
  return {};
}

Status Parser::place_tensors(File& file) {
  // The data section starts at the next multiple of the alignment after the tensor infos.
  const uint64_t a = file.alignment_;
  const uint64_t data_offset = (pos_ + a - 1) / a * a;
  if (data_offset < pos_) return fail(pos_, "data section offset overflows");
  file.data_offset_ = data_offset;
  if (file.tensors_.empty()) return {};
  if (data_offset > size_) {
    return fail(pos_, strprintf("data section would start at %llu, past the end of the file (%zu bytes)",
                                static_cast<unsigned long long>(data_offset), size_));
  }
  const uint64_t data_size = size_ - data_offset;
  std::vector<const TensorInfo*> by_offset;
  for (auto& t : file.tensors_) {
    if (t.offset > data_size || t.n_bytes > data_size - t.offset) {
      return fail(data_offset + std::min(t.offset, data_size),
                  strprintf("tensor '%s': data [%llu, +%llu) extends past the end of the file (data section is %llu "
                            "bytes); the file is truncated or the tensor info is corrupt",
                            t.name.c_str(), static_cast<unsigned long long>(t.offset),
                            static_cast<unsigned long long>(t.n_bytes), static_cast<unsigned long long>(data_size)));
    }
    t.data = data_ + data_offset + t.offset;
    by_offset.push_back(&t);
  }
  std::sort(by_offset.begin(), by_offset.end(), [](auto* x, auto* y) { return x->offset < y->offset; });
  for (size_t i = 1; i < by_offset.size(); ++i) {
    const TensorInfo& prev = *by_offset[i - 1];
    if (prev.offset + prev.n_bytes > by_offset[i]->offset) {
      return fail(data_offset + by_offset[i]->offset,
                  strprintf("tensor '%s' overlaps the data of tensor '%s'", by_offset[i]->name.c_str(),
                            prev.name.c_str()));
    }
  }
  return {};
}

Result<File> Parser::parse() {
  File file;
  file.path_ = name_;
  file.size_ = size_;
  if (size_ == 0) return fail(0, "file is empty, expected a GGUF model");
  KAIRO_TRY_ASSIGN(const uint32_t magic, read_scalar<uint32_t>("the magic number"));
  if (magic != kMagic) {
    std::string got(reinterpret_cast<const char*>(data_), 4);
    return fail(0, "not a GGUF file (magic is " + quote_for_error(got) + ", expected \"GGUF\")");
  }
  KAIRO_TRY_ASSIGN(version_, read_scalar<uint32_t>("the version"));
  if (version_ == 1) return fail(4, "GGUF version 1 is not supported (only 2 and 3); re-convert the model");
  if (version_ != 2 && version_ != 3) {
    if ((version_ & 0xffff) == 0 && (version_ >> 24) >= 2 && (version_ >> 24) <= 3) {
      return fail(4, "big-endian GGUF files are not supported; use a little-endian conversion");
    }
    return fail(4, strprintf("unsupported GGUF version %u (supported: 2, 3)", version_));
  }
  file.version_ = version_;
  const uint64_t n_tensors_at = pos_;
  KAIRO_TRY_ASSIGN(const uint64_t n_tensors, read_count("the tensor count"));
  const uint64_t n_kv_at = pos_;
  KAIRO_TRY_ASSIGN(const uint64_t n_kv, read_count("the metadata count"));
  // Each tensor info takes >= 8 (name len) + 4 (n_dims) + 8 (dim) + 4 (type) + 8 (offset) bytes; each key/value
  // >= 8 + 4 + 1. Bounding by the bytes left keeps a hostile count from reserving gigabytes.
  if (n_tensors > limits_.max_tensors || n_tensors > remaining() / 32) {
    return fail(n_tensors_at, strprintf("tensor count %llu is impossible for a %zu-byte file (limit %llu)",
                                        static_cast<unsigned long long>(n_tensors), size_,
                                        static_cast<unsigned long long>(limits_.max_tensors)));
  }
  if (n_kv > limits_.max_kv || n_kv > remaining() / 13) {
    return fail(n_kv_at, strprintf("metadata count %llu is impossible for a %zu-byte file (limit %llu)",
                                   static_cast<unsigned long long>(n_kv), size_,
                                   static_cast<unsigned long long>(limits_.max_kv)));
  }
  KAIRO_TRY_STATUS(read_metadata(file, n_kv));
  if (const Value* a = file.find("general.alignment")) {
    const auto v = a->as_uint();
    if (a->type() != ValueType::UINT32 || !v || *v == 0 || (*v & (*v - 1)) != 0) {
      return fail(n_kv_at, "general.alignment must be a uint32 power of two, got " + a->to_display());
    }
    file.alignment_ = *v;
  }
  KAIRO_TRY_STATUS(read_tensor_infos(file, n_tensors));
  KAIRO_TRY_STATUS(place_tensors(file));
  return file;
}

Result<File> File::parse(const uint8_t* data, size_t size, const std::string& name, const ReadLimits& limits) {
  Parser parser(data, size, name, limits);
  return parser.parse();
}

Result<File> File::open(const std::string& path, const ReadLimits& limits) {
  KAIRO_TRY_ASSIGN(auto mapping, MappedFile::open(path));
  KAIRO_TRY_ASSIGN(File file, parse(mapping->data(), mapping->size(), path, limits));
  file.mapping_ = std::move(mapping);
  return file;
}

const Value* File::find(const std::string& key) const {
  const auto it = kv_index_.find(key);
  return it == kv_index_.end() ? nullptr : &kv_[it->second].second;
}

const TensorInfo* File::find_tensor(const std::string& name) const {
  const auto it = tensor_index_.find(name);
  return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

namespace {
Error wrong_type(const std::string& path, const std::string& key, const char* expected, const Value& v) {
  return Error{strprintf("%s: metadata key '%s' should be %s, but is %s %s", path.c_str(), key.c_str(), expected,
                         value_type_name(v.type()), v.to_display(4).c_str())};
}
}  // namespace

Result<std::string> File::get_string(const std::string& key) const {
  const Value* v = find(key);
  if (!v) return Error{strprintf("%s: required metadata key '%s' is missing", path_.c_str(), key.c_str())};
  if (!v->as_string()) return wrong_type(path_, key, "a string", *v);
  return *v->as_string();
}

Result<uint64_t> File::get_uint(const std::string& key) const {
  const Value* v = find(key);
  if (!v) return Error{strprintf("%s: required metadata key '%s' is missing", path_.c_str(), key.c_str())};
  const auto u = v->as_uint();
  if (!u) return wrong_type(path_, key, "a non-negative integer", *v);
  return *u;
}

Result<double> File::get_float(const std::string& key) const {
  const Value* v = find(key);
  if (!v) return Error{strprintf("%s: required metadata key '%s' is missing", path_.c_str(), key.c_str())};
  const auto f = v->as_float();
  if (!f) return wrong_type(path_, key, "a number", *v);
  return *f;
}

Result<uint64_t> File::get_uint_or(const std::string& key, uint64_t fallback) const {
  return find(key) ? get_uint(key) : Result<uint64_t>(fallback);
}

Result<double> File::get_float_or(const std::string& key, double fallback) const {
  return find(key) ? get_float(key) : Result<double>(fallback);
}

Result<bool> File::get_bool_or(const std::string& key, bool fallback) const {
  const Value* v = find(key);
  if (!v) return fallback;
  const auto b = v->as_bool();
  if (!b) return wrong_type(path_, key, "a bool", *v);
  return *b;
}

Result<std::string> File::get_string_or(const std::string& key, const std::string& fallback) const {
  return find(key) ? get_string(key) : Result<std::string>(fallback);
}

}  // namespace kairo::gguf
