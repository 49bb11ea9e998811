#pragma once
// The CUDA device: kernels::Device over one NVIDIA GPU (or an AMD one through HIP), so the one decoder
// (model/decoder.cpp) runs a model end to end on it: `kairo run|serve|bench --device cuda`.
//
// Spans carry the device address in DeviceSpan::offset with buffer == kCudaAddressSpace (ptr stays null, so no
// caller can mistake device memory for host memory). Every op is enqueued on the context's stream; a step's work
// runs in order and end_step waits for it. Per-step inputs go through pinned staging into a device arena.
//
// Numerics::Exact (the batch-invariance contract) takes the GEMV for every token count (its per-token reduction
// order does not depend on the token count; cuBLAS's does) and never splits attention across blocks.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/result.h"
#include "kernels/device.h"

namespace kairo::kernels::cuda {

// DeviceSpan::buffer of every CUDA span: the device's flat address space (the address is the span's offset).
inline constexpr uint32_t kCudaAddressSpace = 1;

struct CudaDeviceInfo {
  int index = 0;
  std::string name;  // "NVIDIA H100 80GB HBM3"
  int compute_major = 0, compute_minor = 0;
  uint64_t total_bytes = 0, free_bytes = 0;
  int n_sms = 0;
  int64_t max_shared_memory_per_block = 0;
};

// Every CUDA device. The error says why there is none (no driver, no device, built without CUDA).
Result<std::vector<CudaDeviceInfo>> list_devices();
// The device `index` (only 0 in this version: the kernel context binds one device per process).
Result<std::shared_ptr<Device>> open_device(int index);
// KV cache dtypes the CUDA attention and kv_write take (F32, F16, BF16); the error names them.
Status check_kv_dtype(DType dtype);

}  // namespace kairo::kernels::cuda
