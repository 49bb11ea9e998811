#pragma once
// The per-process CUDA state the backend table's functions share: device 0, one stream every op is enqueued on
// (so a step is a single ordered stream, capturable as a graph), the cuBLAS handle bound to it (CUDA only), and
// the kernel workspaces. Workspaces grow on demand outside graph capture; reserve() sizes them up front so a capture never
// reallocates (growing during capture aborts with a message naming reserve()).
#include <cstdint>

#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/device_memory.h"
#include "kernels/cuda/launch_config.h"
#include "kernels/cuda/memory_plan.h"

namespace kairo::kernels::cuda {

class CudaContext {
 public:
  // Created on first use; aborts (CUDA_CHECK) when there is no device: callers check cuda_device_count() first.
  static CudaContext& get();

  cudaStream_t stream() const { return stream_; }
#if !defined(KAIRO_HIP)
  cublasHandle_t cublas() const { return cublas_; }
#endif
  const DeviceLimits& limits() const { return limits_; }

  void reserve(const WorkspaceSizes& sizes);
  void* dequant_workspace(int64_t bytes) { return grow(dequant_, bytes, "dequant"); }
  void* act16_workspace(int64_t bytes) { return grow(act16_, bytes, "act16"); }
  float* attention_workspace(int64_t bytes) { return static_cast<float*>(grow(attn_, bytes, "attention")); }
  int64_t attention_workspace_bytes() const { return static_cast<int64_t>(attn_.size()); }

  // Waits for everything enqueued so far (the end of a step, or a test reading results).
  void synchronize();

  CudaContext(const CudaContext&) = delete;
  CudaContext& operator=(const CudaContext&) = delete;

 private:
  CudaContext();
  void* grow(DeviceBuffer& buf, int64_t bytes, const char* what);

  cudaStream_t stream_ = nullptr;
  DeviceLimits limits_;
#if !defined(KAIRO_HIP)
  cublasHandle_t cublas_ = nullptr;
  DeviceBuffer cublas_workspace_;
#endif
  DeviceBuffer dequant_, act16_, attn_;
};

}  // namespace kairo::kernels::cuda
