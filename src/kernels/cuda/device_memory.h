#pragma once
// Owning handles for device and pinned host memory. Allocation failure of a sized request the planner already
// checked is a device error (CUDA_CHECK aborts); try_allocate() is for callers that size by probing.
#include <cstddef>
#include <cstdint>
#include <optional>

#include "core/result.h"
#include "kernels/cuda/memory_plan.h"

namespace kairo::kernels::cuda {

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t n_bytes);  // aborts when the device is out of memory
  static Result<DeviceBuffer> try_allocate(size_t n_bytes);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& o) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void* data() const { return data_; }
  template <typename T> T* as() const { return static_cast<T*>(data_); }
  size_t size() const { return size_; }

 private:
  void* data_ = nullptr;
  size_t size_ = 0;
};

// Page-locked host memory: the only kind cudaMemcpyAsync copies without a hidden staging copy, and the only kind a
// captured graph may copy from.
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  explicit PinnedBuffer(size_t n_bytes);
  ~PinnedBuffer();
  PinnedBuffer(PinnedBuffer&& o) noexcept;
  PinnedBuffer& operator=(PinnedBuffer&& o) noexcept;
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;

  void* data() const { return data_; }
  template <typename T> T* as() const { return static_cast<T*>(data_); }
  size_t size() const { return size_; }

 private:
  void* data_ = nullptr;
  size_t size_ = 0;
};

// One device allocation handed out by bumping a cursor (weights: uploaded once, freed with the model).
class DeviceArena {
 public:
  DeviceArena() = default;
  explicit DeviceArena(size_t capacity);
  // Device pointer to `bytes` (256-aligned), or nullptr when the arena is full.
  void* allocate(size_t bytes);
  size_t used() const { return static_cast<size_t>(cursor_.used()); }
  size_t capacity() const { return buffer_.size(); }

 private:
  DeviceBuffer buffer_;
  ArenaCursor cursor_{0};
};

struct DeviceMemoryInfo {
  uint64_t free_bytes = 0;
  uint64_t total_bytes = 0;
};
DeviceMemoryInfo device_memory_info();

// Number of CUDA devices this process can use; 0 when there is no device or no driver (never aborts).
int cuda_device_count();

}  // namespace kairo::kernels::cuda
