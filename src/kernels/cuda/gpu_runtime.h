#pragma once
// The GPU runtime the kernels are written against: CUDA, or AMD's HIP when built with -DKAIRO_HIP=ON (compiled by
// hipcc). The sources use the CUDA names; under HIP this header maps each one to its HIP twin (as llama.cpp's
// vendors/hip.h does), and the few calls whose signatures differ go through the helpers at the end.
//
// Warp size: every kernel is written for logical warps of kWarpSize = 32 lanes (lane = threadIdx.x % 32, block
// sizes multiples of 32, shuffles with width 32). On wave32 hardware (NVIDIA, RDNA gfx1030) a logical warp is a
// hardware one; on wave64 CDNA (gfx90a) each wavefront holds two logical warps, and warp_xor()'s explicit width
// keeps every shuffle inside its own 32 lanes. No kernel uses warp-synchronous code beyond warp_xor.
//
// HIP has no cuBLAS here (Debian's HIP 5.2 ships no rocBLAS): the HIP build's matmul is kairo's own GEMV for every
// token count (gemm.cu), the path Numerics::Exact takes on CUDA too.
#include <cstdint>

#if defined(KAIRO_HIP)
#include <hip/hip_bfloat16.h>
#include <hip/hip_fp16.h>
#include <hip/hip_runtime.h>

#define cudaDeviceProp hipDeviceProp_t
#define cudaError_t hipError_t
#define cudaEventCreate hipEventCreate
#define cudaEventCreateWithFlags hipEventCreateWithFlags
#define cudaEventDestroy hipEventDestroy
#define cudaEventDisableTiming hipEventDisableTiming
#define cudaEventElapsedTime hipEventElapsedTime
#define cudaEventRecord hipEventRecord
#define cudaEventSynchronize hipEventSynchronize
#define cudaEvent_t hipEvent_t
#define cudaFree hipFree
#define cudaFreeHost hipHostFree
#define cudaGetDevice hipGetDevice
#define cudaGetDeviceCount hipGetDeviceCount
#define cudaGetDeviceProperties hipGetDeviceProperties
#define cudaGetErrorString hipGetErrorString
#define cudaGetLastError hipGetLastError
#define cudaGraphDestroy hipGraphDestroy
#define cudaGraphExecDestroy hipGraphExecDestroy
#define cudaGraphExec_t hipGraphExec_t
#define cudaGraphLaunch hipGraphLaunch
#define cudaGraph_t hipGraph_t
#define cudaMalloc hipMalloc
#define cudaMallocHost(ptr, bytes) hipHostMalloc(ptr, bytes, 0)
#define cudaMemGetInfo hipMemGetInfo
#define cudaMemcpy hipMemcpy
#define cudaMemcpyAsync hipMemcpyAsync
#define cudaMemcpyDeviceToDevice hipMemcpyDeviceToDevice
#define cudaMemcpyDeviceToHost hipMemcpyDeviceToHost
#define cudaMemcpyHostToDevice hipMemcpyHostToDevice
#define cudaMemsetAsync hipMemsetAsync
#define cudaSetDevice hipSetDevice
#define cudaStreamBeginCapture hipStreamBeginCapture
#define cudaStreamCaptureModeThreadLocal hipStreamCaptureModeThreadLocal
#define cudaStreamCaptureStatus hipStreamCaptureStatus
#define cudaStreamCaptureStatusNone hipStreamCaptureStatusNone
#define cudaStreamCreateWithFlags hipStreamCreateWithFlags
#define cudaStreamEndCapture hipStreamEndCapture
#define cudaStreamIsCapturing hipStreamIsCapturing
#define cudaStreamNonBlocking hipStreamNonBlocking
#define cudaStreamSynchronize hipStreamSynchronize
#define cudaStream_t hipStream_t
#define cudaSuccess hipSuccess
#else
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#endif

namespace kairo::kernels::cuda {

inline constexpr int kWarpSize = 32;  // the logical warp every kernel is written for (see above)

#if defined(KAIRO_HIP)
using gpu_bf16 = hip_bfloat16;
#if defined(__HIPCC__)
__device__ __forceinline__ float bf16_to_float_dev(gpu_bf16 v) { return static_cast<float>(v); }
__device__ __forceinline__ gpu_bf16 float_to_bf16_dev(float v) { return gpu_bf16(v); }  // round to nearest even

// Butterfly exchange within a logical warp of 32 lanes (half a wave64 wavefront on CDNA).
template <typename T>
__device__ __forceinline__ T warp_xor(T v, int lane_mask) {
  return __shfl_xor(v, lane_mask, kWarpSize);
}

// A read the kernels use once (weights): HIP 5.2 has no streaming-load intrinsic, so a plain load.
__device__ __forceinline__ uint4 load_once(const uint4* p) { return *p; }
#endif  // __HIPCC__

template <typename Kernel>
inline cudaError_t set_max_dynamic_smem(Kernel* kernel, int bytes) {
  return hipFuncSetAttribute(reinterpret_cast<const void*>(kernel), hipFuncAttributeMaxDynamicSharedMemorySize,
                             bytes);
}

inline cudaError_t graph_instantiate(cudaGraphExec_t* exec, cudaGraph_t graph) {
  return hipGraphInstantiate(exec, graph, nullptr, nullptr, 0);
}

inline int64_t max_smem_per_block(const cudaDeviceProp& p) { return static_cast<int64_t>(p.sharedMemPerBlock); }
inline int64_t smem_per_multiprocessor(const cudaDeviceProp& p) {
  return static_cast<int64_t>(p.maxSharedMemoryPerMultiProcessor);
}
#else
using gpu_bf16 = __nv_bfloat16;
#if defined(__CUDACC__)  // device helpers: .cpp files (tests, host code) include this header too
__device__ __forceinline__ float bf16_to_float_dev(gpu_bf16 v) { return __bfloat162float(v); }
__device__ __forceinline__ gpu_bf16 float_to_bf16_dev(float v) { return __float2bfloat16_rn(v); }

template <typename T>
__device__ __forceinline__ T warp_xor(T v, int lane_mask) {
  return __shfl_xor_sync(0xffffffffu, v, lane_mask, kWarpSize);
}

// Weight bytes are read exactly once per matmul: the streaming hint keeps them from evicting the activations.
__device__ __forceinline__ uint4 load_once(const uint4* p) { return __ldcs(p); }
#endif  // __CUDACC__

template <typename Kernel>
inline cudaError_t set_max_dynamic_smem(Kernel* kernel, int bytes) {
  return cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
}

inline cudaError_t graph_instantiate(cudaGraphExec_t* exec, cudaGraph_t graph) {
  return cudaGraphInstantiate(exec, graph, 0);
}

// The opt-in maximum: a block may use more than the default 48 KiB once it asks (set_max_dynamic_smem).
inline int64_t max_smem_per_block(const cudaDeviceProp& p) { return static_cast<int64_t>(p.sharedMemPerBlockOptin); }
inline int64_t smem_per_multiprocessor(const cudaDeviceProp& p) {
  return static_cast<int64_t>(p.sharedMemPerMultiprocessor);
}
#endif

}  // namespace kairo::kernels::cuda
