#include "gguf/writer.h"

#include <algorithm>
#include <cassert>
#include <cerrno>
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
  const uint64_t n_bytes = bytes.size();
  tensors_.push_back(Tensor{name, type, std::move(dims), std::move(bytes), n_bytes, false});
}

void Writer::add_tensor_info(const std::string& name, DType type, std::vector<int64_t> dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  const DTypeInfo& info = dtype_info(type);
  const uint64_t n_bytes = static_cast<uint64_t>(n / info.block_size * info.block_bytes);
  tensors_.push_back(Tensor{name, type, std::move(dims), {}, n_bytes, true});
}

std::vector<uint8_t> Writer::header_bytes() const {
  ByteSink sink;
  sink.put<uint32_t>(kMagic);
  sink.put<uint32_t>(3);
  sink.put<uint64_t>(tensors_.size());
  // general.alignment is always written from alignment_ (after the other keys): when the caller set it, or when the
  // alignment is not the default one readers assume.
  const bool caller_set_alignment =
      std::any_of(kv_.begin(), kv_.end(), [](const auto& kv) { return kv.first == "general.alignment"; });
  const bool has_alignment_key = caller_set_alignment || alignment_ != kDefaultAlignment;
  sink.put<uint64_t>(kv_.size() - (caller_set_alignment ? 1 : 0) + (has_alignment_key ? 1 : 0));
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
    offset += (t.n_bytes + alignment_ - 1) / alignment_ * alignment_;
  }
  sink.pad_to(alignment_);
  return std::move(sink.out);
}

std::vector<uint8_t> Writer::to_bytes() const {
  ByteSink sink;
  sink.out = header_bytes();
  for (const Tensor& t : tensors_) {
    assert(!t.streamed && "to_bytes(): a tensor declared with add_tensor_info() has no bytes; use open_stream()");
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

Result<TensorStream> Writer::open_stream(const std::string& path) const {
  const std::string tmp = path + ".tmp";
  FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) return Error{strprintf("%s: cannot create: %s", tmp.c_str(), std::strerror(errno))};
  TensorStream stream(*this, path, f);
  const std::vector<uint8_t> header = header_bytes();
  KAIRO_TRY_STATUS(stream.put(header.data(), header.size()));
  KAIRO_TRY_STATUS(stream.advance());
  return stream;
}

TensorStream::TensorStream(const Writer& writer, std::string path, FILE* file)
    : writer_(&writer), path_(std::move(path)), tmp_path_(path_ + ".tmp"), file_(file), buffer_(size_t{4} << 20) {
  std::setvbuf(file_, buffer_.data(), _IOFBF, buffer_.size());
}

TensorStream::TensorStream(TensorStream&& o) noexcept
    : writer_(o.writer_), path_(std::move(o.path_)), tmp_path_(std::move(o.tmp_path_)), file_(o.file_),
      tensor_idx_(o.tensor_idx_), written_(o.written_), file_offset_(o.file_offset_), buffer_(std::move(o.buffer_)) {
  o.file_ = nullptr;  // the vector's heap buffer moved with it, so stdio's pointer into it stays valid
}

TensorStream::~TensorStream() {
  if (file_) {
    std::fclose(file_);
    std::remove(tmp_path_.c_str());
  }
}

const std::string& TensorStream::current_tensor() const {
  static const std::string none;
  return tensor_idx_ < writer_->tensors_.size() ? writer_->tensors_[tensor_idx_].name : none;
}

Status TensorStream::put(const void* data, size_t n) {
  if (n > 0 && std::fwrite(data, 1, n, file_) != n) {
    return Error{strprintf("%s: write failed: %s", tmp_path_.c_str(), std::strerror(errno))};
  }
  file_offset_ += n;
  return {};
}

Status TensorStream::advance() {
  const auto& tensors = writer_->tensors_;
  static const uint8_t kZeros[256] = {};
  while (tensor_idx_ < tensors.size()) {
    const Writer::Tensor& t = tensors[tensor_idx_];
    if (t.streamed && written_ < t.n_bytes) return {};  // waiting for its bytes
    if (!t.streamed) KAIRO_TRY_STATUS(put(t.bytes.data(), t.bytes.size()));
    const uint64_t pad = (writer_->alignment_ - file_offset_ % writer_->alignment_) % writer_->alignment_;
    KAIRO_TRY_STATUS(put(kZeros, pad));
    ++tensor_idx_;
    written_ = 0;
  }
  return {};
}

Status TensorStream::write(const void* data, size_t n_bytes) {
  assert(file_ && "write() after finish()");
  const auto& tensors = writer_->tensors_;
  if (tensor_idx_ >= tensors.size()) {
    return Error{strprintf("%s: %zu bytes written after the last tensor", path_.c_str(), n_bytes)};
  }
  const Writer::Tensor& t = tensors[tensor_idx_];
  if (written_ + n_bytes > t.n_bytes) {
    return Error{strprintf("%s: tensor '%s' holds %llu bytes but %llu were written", path_.c_str(), t.name.c_str(),
                           static_cast<unsigned long long>(t.n_bytes),
                           static_cast<unsigned long long>(written_ + n_bytes))};
  }
  KAIRO_TRY_STATUS(put(data, n_bytes));
  written_ += n_bytes;
  return advance();
}

Status TensorStream::finish() {
  assert(file_ && "finish() called twice");
  if (tensor_idx_ < writer_->tensors_.size()) {
    return Error{strprintf("%s: tensor '%s' is incomplete (%llu of %llu bytes written)", path_.c_str(),
                           current_tensor().c_str(), static_cast<unsigned long long>(written_),
                           static_cast<unsigned long long>(writer_->tensors_[tensor_idx_].n_bytes))};
  }
  const bool ok = std::fflush(file_) == 0;
  std::fclose(file_);
  file_ = nullptr;
  if (!ok || std::rename(tmp_path_.c_str(), path_.c_str()) != 0) {
    std::remove(tmp_path_.c_str());
    return Error{strprintf("%s: write failed: %s", path_.c_str(), std::strerror(errno))};
  }
  return {};
}

}  // namespace kairo::gguf
