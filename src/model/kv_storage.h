#pragma once
// The KV tensors: per layer, K and V for n_blocks × block_size token slots, in the memory of the device the model
// runs on. Which slots belong to whom is decided elsewhere (kv/ bookkeeping); this only owns the memory.
// With n_window_blocks > 0 the sliding-window layers form a group of their own with that many blocks (their block
// ids are the windowed group's: kv::KvGroup::Window), so a long context costs them only their window.
#include <cstdint>
#include <memory>
#include <vector>

#include "core/result.h"
#include "kernels/device.h"
#include "model/config.h"

namespace kairo::model {

class KvStorage {
 public:
  // `advice` ends the error when the pool does not fit: what the caller's user can lower (the server's flags by
  // default).
  static Result<KvStorage> create(std::shared_ptr<kernels::Device> device, const ModelConfig& config,
                                  int64_t n_blocks, int block_size, DType dtype, int64_t n_window_blocks = 0,
                                  const char* advice = nullptr);

  KvStorage() = default;
  KvStorage(KvStorage&& other) noexcept { *this = std::move(other); }
  KvStorage& operator=(KvStorage&& other) noexcept;
  ~KvStorage();

  kernels::DeviceKvLayer layer(int l) const {
    return kernels::DeviceKvLayer{k_[static_cast<size_t>(l)], v_[static_cast<size_t>(l)], dtype_, n_kv_heads_,
                                  head_dim_, block_size_};
  }
  int64_t n_blocks() const { return n_blocks_; }
  // Whether layer l's blocks are the windowed group's.
  bool windowed(int l) const { return windowed_[static_cast<size_t>(l)]; }
  int block_size() const { return block_size_; }
  DType dtype() const { return dtype_; }
  uint64_t n_bytes() const { return n_bytes_; }
  // Copies the contents of one block to another in every layer of a group (copy-on-write for forked sequences).
  void copy_block(int64_t src, int64_t dst, bool window_group = false);

 private:
  void release();  // frees the device memory
  // One allocation per layer and side. On the CPU they come from allocate_bulk (2 MiB pages): a decode step's
  // attention reads every sequence's K and V rows, scattered over the pool, and on 4 KiB pages nearly every block
  // it touches was a TLB miss.
  std::shared_ptr<kernels::Device> device_;
  std::vector<kernels::DeviceSpan> k_, v_;
  std::vector<bool> windowed_;  // [n_layers]
  uint64_t block_bytes_ = 0;     // one block of one layer's K (or V)
  DType dtype_ = DType::F16;
  int64_t n_blocks_ = 0;
  int block_size_ = 16;
  int n_kv_heads_ = 0;
  int head_dim_ = 0;
  uint64_t n_bytes_ = 0;
};

}  // namespace kairo::model
