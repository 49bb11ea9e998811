#include "kernels/cuda/cuda_context.h"

#include <cstdio>
#include <cstdlib>

#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/ops.h"

namespace kairo::kernels::cuda {

namespace {
// cuBLAS allocates its own workspace per call unless given one, which a graph capture can't contain.
constexpr size_t kCublasWorkspaceBytes = 32u << 20;
}  // namespace

CudaContext& CudaContext::get() {
  static CudaContext* ctx = new CudaContext();  // never destroyed: kernels may still run at static destruction
  return *ctx;
}

CudaContext::CudaContext() {
  CUDA_CHECK(cudaSetDevice(0));
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  limits_.n_sms = prop.multiProcessorCount;
  limits_.max_smem_per_block = max_smem_per_block(prop);
  limits_.smem_per_sm = smem_per_multiprocessor(prop);
  CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
#if !defined(KAIRO_HIP)
  CUBLAS_CHECK(cublasCreate(&cublas_));
  CUBLAS_CHECK(cublasSetStream(cublas_, stream_));
  cublas_workspace_ = DeviceBuffer(kCublasWorkspaceBytes);
  CUBLAS_CHECK(cublasSetWorkspace(cublas_, cublas_workspace_.data(), kCublasWorkspaceBytes));
#endif
  gemv_set_smem_limit(limits_.max_smem_per_block);
}

void CudaContext::reserve(const WorkspaceSizes& sizes) {
  grow(dequant_, sizes.dequant_bytes, "dequant");
  grow(act16_, sizes.act16_bytes, "act16");
  grow(attn_, sizes.attn_partial_bytes, "attention");
}

void* CudaContext::grow(DeviceBuffer& buf, int64_t bytes, const char* what) {
  if (static_cast<size_t>(bytes) <= buf.size()) return buf.data();
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  CUDA_CHECK(cudaStreamIsCapturing(stream_, &status));
  if (status != cudaStreamCaptureStatusNone) {
    std::fprintf(stderr,
                 "kairo CUDA: the %s workspace must grow to %lld bytes during graph capture; size it first with "
                 "CudaContext::reserve(workspace_sizes(...)) for the largest step\n",
                 what, static_cast<long long>(bytes));
    std::abort();
  }
  CUDA_CHECK(cudaStreamSynchronize(stream_));  // the old buffer may still be in use by queued kernels
  buf = DeviceBuffer(static_cast<size_t>(bytes));
  return buf.data();
}

void CudaContext::synchronize() { CUDA_CHECK(cudaStreamSynchronize(stream_)); }

}  // namespace kairo::kernels::cuda
