#include "model/kv_storage.h"

#include <utility>

#include "core/format.h"

namespace kairo::model {

Result<KvStorage> KvStorage::create(std::shared_ptr<kernels::Device> device, const ModelConfig& c, int64_t n_blocks,
                                    int block_size, DType dtype, int64_t n_window_blocks, const char* advice) {
  KAIRO_TRY_STATUS(device->check_kv_dtype(dtype));
  if (dtype == DType::Q8_0 && c.head_dim % 32 != 0) {
    return Error{strprintf("a Q8_0 KV cache needs a head size that is a multiple of 32, this model's is %d; use f16",
                           c.head_dim)};
  }
  if (n_blocks <= 0 || block_size <= 0 || n_window_blocks < 0) return Error{"KV cache needs at least one block"};
  KvStorage s;
  s.device_ = std::move(device);
  s.dtype_ = dtype;
  s.n_blocks_ = n_blocks;
  s.block_size_ = block_size;
  s.n_kv_heads_ = c.n_kv_heads;
  s.head_dim_ = c.head_dim;
  s.block_bytes_ = static_cast<uint64_t>(block_size) * row_bytes(dtype, c.kv_dim());
  for (int l = 0; l < c.n_layers; ++l) s.windowed_.push_back(n_window_blocks > 0 && c.layer_windowed(l));
  const uint64_t layer_bytes = static_cast<uint64_t>(n_blocks) * s.block_bytes_;
  if (layer_bytes > s.device_->max_allocation_bytes()) {
    const uint64_t max_tokens = s.device_->max_allocation_bytes() / row_bytes(dtype, c.kv_dim());
    return Error{strprintf("a KV pool of %lld tokens needs %s per layer for K (and again for V), more than %s can "
                           "hold in one buffer (%s): %s to at most %llu tokens",
                           static_cast<long long>(n_blocks) * block_size, human_bytes(layer_bytes).c_str(),
                           s.device_->name().c_str(), human_bytes(s.device_->max_allocation_bytes()).c_str(),
                           advice ? advice : "lower --kv-cache-memory or --max-num-seqs",
                           static_cast<unsigned long long>(max_tokens))};
  }
  for (int l = 0; l < c.n_layers; ++l) {
    const int64_t blocks = s.windowed(l) ? n_window_blocks : n_blocks;
    s.n_bytes_ += 2ull * static_cast<uint64_t>(blocks) * s.block_bytes_;
  }
  for (int l = 0; l < c.n_layers; ++l) {
    const uint64_t bytes = static_cast<uint64_t>(s.windowed(l) ? n_window_blocks : n_blocks) * s.block_bytes_;
    for (auto* side : {&s.k_, &s.v_}) {
      Result<kernels::DeviceSpan> span = s.device_->allocate(bytes, "the KV cache");
      if (!span) {
        return Error{strprintf("the KV cache needs %s but %s; %s (kairo plan predicts what fits)",
                               human_bytes(s.n_bytes_).c_str(), span.error().message.c_str(),
                               advice ? advice : "lower --kv-cache-memory or --mem-budget-gb")};
      }
      side->push_back(*span);
    }
  }
  return s;
}

KvStorage& KvStorage::operator=(KvStorage&& other) noexcept {
  if (this == &other) return *this;
  release();
  device_ = std::move(other.device_);
  k_ = std::move(other.k_);
  v_ = std::move(other.v_);
  other.k_.clear();
  other.v_.clear();
  windowed_ = std::move(other.windowed_);
  block_bytes_ = other.block_bytes_;
  dtype_ = other.dtype_;
  n_blocks_ = other.n_blocks_;
  block_size_ = other.block_size_;
  n_kv_heads_ = other.n_kv_heads_;
  head_dim_ = other.head_dim_;
  n_bytes_ = other.n_bytes_;
  return *this;
}

KvStorage::~KvStorage() { release(); }

void KvStorage::release() {
  if (!device_) return;
  for (auto* side : {&k_, &v_})
    for (kernels::DeviceSpan span : *side) device_->free(span);
  k_.clear();
  v_.clear();
}

void KvStorage::copy_block(int64_t src, int64_t dst, bool window_group) {
  for (auto* side : {&k_, &v_}) {
    for (size_t l = 0; l < side->size(); ++l) {
      if (windowed_[l] != window_group) continue;
      const kernels::DeviceSpan layer = (*side)[l];
      device_->copy(layer.at(static_cast<uint64_t>(src) * block_bytes_), layer.at(static_cast<uint64_t>(dst) * block_bytes_),
                    block_bytes_);
    }
  }
}

}  // namespace kairo::model
