#include "kernels/cuda/device_kv_pool.h"

#include <utility>

#include "core/format.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/cuda_context.h"

namespace kairo::kernels::cuda {

Result<DeviceKvPool> DeviceKvPool::create(int n_layers, int n_kv_heads, int head_dim, int64_t n_blocks,
                                          int block_size, DType dtype) {
  if (dtype != DType::F16 && dtype != DType::BF16 && dtype != DType::F32) {
    return Error{strprintf("KV cache type %s is not supported by the CUDA backend (F16, BF16 or F32)",
                           std::string(dtype_name(dtype)).c_str())};
  }
  if (n_layers <= 0 || n_kv_heads <= 0 || head_dim <= 0 || n_blocks <= 0 || block_size <= 0) {
    return Error{"KV pool dimensions must all be positive"};
  }
  DeviceKvPool p;
  p.n_layers_ = n_layers;
  p.n_kv_heads_ = n_kv_heads;
  p.head_dim_ = head_dim;
  p.n_blocks_ = n_blocks;
  p.block_size_ = block_size;
  p.dtype_ = dtype;
  p.block_bytes_ = static_cast<uint64_t>(block_size) * n_kv_heads * head_dim * dtype_info(dtype).block_bytes;
  KAIRO_TRY_ASSIGN(p.buffer_, DeviceBuffer::try_allocate(2ull * n_layers * n_blocks * p.block_bytes_));
  return Result<DeviceKvPool>(std::move(p));
}

KvLayerView DeviceKvPool::layer(int l) const {
  auto* base = static_cast<uint8_t*>(buffer_.data());
  const uint64_t layer_bytes = static_cast<uint64_t>(n_blocks_) * block_bytes_;
  return KvLayerView{base + (2ull * l) * layer_bytes, base + (2ull * l + 1) * layer_bytes, dtype_, n_kv_heads_,
                     head_dim_, block_size_};
}

void DeviceKvPool::copy_block(int64_t src, int64_t dst) {
  cudaStream_t stream = CudaContext::get().stream();
  for (int l = 0; l < n_layers_; ++l) {
    const KvLayerView v = layer(l);
    for (void* base : {v.k, v.v}) {
      auto* b = static_cast<uint8_t*>(base);
      CUDA_CHECK(cudaMemcpyAsync(b + dst * block_bytes_, b + src * block_bytes_, block_bytes_,
                                 cudaMemcpyDeviceToDevice, stream));
    }
  }
}

}  // namespace kairo::kernels::cuda
