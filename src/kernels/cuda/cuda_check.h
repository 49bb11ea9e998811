#pragma once
// Device errors are unrecoverable for the step they surface in (a failed launch, an illegal address, a lost
// device): they throw kernels::DeviceLost with the call, file and line, which the engine turns into an error for the
// requests in flight and a 503 for later ones, while the server stays up (kernels/device.h). Expected failures
// (unsupported weight type, not enough memory for a KV pool) are reported as Result values before any kernel runs.
// Destructors and noexcept moves ignore CUDA errors instead: after a failure the memory goes with the context.
#include <cstdio>
#include <string>

#include "core/format.h"
#include "kernels/device.h"

#include "kernels/cuda/gpu_runtime.h"
#if !defined(KAIRO_HIP)
#include <cublas_v2.h>
#endif

namespace kairo::kernels::cuda {

[[noreturn]] inline void cuda_fail(const char* what, const char* detail, const char* file, int line) {
  const std::string message = strprintf("CUDA error: %s failed: %s at %s:%d", what, detail, file, line);
  std::fprintf(stderr, "%s\n", message.c_str());
  throw DeviceLost(message);
}

}  // namespace kairo::kernels::cuda

#define CUDA_CHECK(call)                                                                                \
  do {                                                                                                  \
    const cudaError_t kairo_cuda_err_ = (call);                                                         \
    if (kairo_cuda_err_ != cudaSuccess) {                                                               \
      ::kairo::kernels::cuda::cuda_fail(#call, cudaGetErrorString(kairo_cuda_err_), __FILE__, __LINE__); \
    }                                                                                                   \
  } while (0)

#if !defined(KAIRO_HIP)
#define CUBLAS_CHECK(call)                                                                                   \
  do {                                                                                                       \
    const cublasStatus_t kairo_cublas_st_ = (call);                                                          \
    if (kairo_cublas_st_ != CUBLAS_STATUS_SUCCESS) {                                                         \
      ::kairo::kernels::cuda::cuda_fail(#call, cublasGetStatusString(kairo_cublas_st_), __FILE__, __LINE__); \
    }                                                                                                        \
  } while (0)
#endif

// After a kernel launch: catches bad launch configurations at the launch site instead of at the next sync.
#define CUDA_CHECK_LAUNCH() CUDA_CHECK(cudaGetLastError())
