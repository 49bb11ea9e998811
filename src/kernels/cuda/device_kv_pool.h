#pragma once
// The paged KV cache in device memory: per layer, K and V for n_blocks x block_size slots (the same layout as
// model/kv_storage.h, which the CPU path uses). One allocation; which slots belong to whom is decided by kv/.
#include <cstdint>

#include "core/result.h"
#include "kernels/backend.h"
#include "kernels/cuda/device_memory.h"

namespace kairo::kernels::cuda {

class DeviceKvPool {
 public:
  // Size n_blocks with plan_kv_pool() (memory_plan.h) from device_memory_info() after the weights are uploaded.
  static Result<DeviceKvPool> create(int n_layers, int n_kv_heads, int head_dim, int64_t n_blocks, int block_size,
                                     DType dtype);

  KvLayerView layer(int l) const;
  // Copies one block to another in every layer (copy-on-write of a forked sequence), stream-ordered.
  void copy_block(int64_t src, int64_t dst);

  int64_t n_blocks() const { return n_blocks_; }
  int block_size() const { return block_size_; }
  DType dtype() const { return dtype_; }
  uint64_t n_bytes() const { return buffer_.size(); }

 private:
  DeviceBuffer buffer_;
  int n_layers_ = 0;
  int n_kv_heads_ = 0;
  int head_dim_ = 0;
  int64_t n_blocks_ = 0;
  int block_size_ = 16;
  DType dtype_ = DType::F16;
  uint64_t block_bytes_ = 0;  // one block of K (or V) in one layer
};

}  // namespace kairo::kernels::cuda
