#include "kernels/cuda/device_memory.h"

#include <utility>

#include "core/format.h"
#include "kernels/cuda/cuda_check.h"

namespace kairo::kernels::cuda {

DeviceBuffer::DeviceBuffer(size_t n_bytes) : size_(n_bytes) {
  if (n_bytes > 0) CUDA_CHECK(cudaMalloc(&data_, n_bytes));
}

Result<DeviceBuffer> DeviceBuffer::try_allocate(size_t n_bytes) {
  DeviceBuffer b;
  if (n_bytes == 0) return Result<DeviceBuffer>(std::move(b));
  const cudaError_t err = cudaMalloc(&b.data_, n_bytes);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();  // clear the sticky-free error state of a failed allocation
    return Error{strprintf("could not allocate %s of device memory: %s", human_bytes(n_bytes).c_str(),
                           cudaGetErrorString(err))};
  }
  b.size_ = n_bytes;
  return Result<DeviceBuffer>(std::move(b));
}

// Destructors never abort: after a device failure cudaFree reports the sticky error, and the memory goes with the
// context anyway.
DeviceBuffer::~DeviceBuffer() {
  if (data_ != nullptr) (void)cudaFree(data_);
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& o) noexcept
    : data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept {
  if (this != &o) {
    if (data_ != nullptr) (void)cudaFree(data_);
    data_ = std::exchange(o.data_, nullptr);
    size_ = std::exchange(o.size_, 0);
  }
  return *this;
}

PinnedBuffer::PinnedBuffer(size_t n_bytes) : size_(n_bytes) {
  if (n_bytes > 0) CUDA_CHECK(cudaMallocHost(&data_, n_bytes));
}

PinnedBuffer::~PinnedBuffer() {
  if (data_ != nullptr) (void)cudaFreeHost(data_);
}

PinnedBuffer::PinnedBuffer(PinnedBuffer&& o) noexcept
    : data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0)) {}

PinnedBuffer& PinnedBuffer::operator=(PinnedBuffer&& o) noexcept {
  if (this != &o) {
    if (data_ != nullptr) (void)cudaFreeHost(data_);
    data_ = std::exchange(o.data_, nullptr);
    size_ = std::exchange(o.size_, 0);
  }
  return *this;
}

DeviceArena::DeviceArena(size_t capacity) : buffer_(capacity), cursor_(static_cast<int64_t>(capacity)) {}

void* DeviceArena::allocate(size_t bytes) {
  const std::optional<int64_t> off = cursor_.take(static_cast<int64_t>(bytes));
  if (!off) return nullptr;
  return static_cast<uint8_t*>(buffer_.data()) + *off;
}

DeviceMemoryInfo device_memory_info() {
  size_t free_bytes = 0, total_bytes = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  return {free_bytes, total_bytes};
}

int cuda_device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return n;
}

}  // namespace kairo::kernels::cuda
