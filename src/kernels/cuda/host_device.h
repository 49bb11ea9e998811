#pragma once
// Code shared between CUDA kernels and host C++: KAIRO_HD marks functions that compile for both, so the weight
// decoders and index maps the kernels use can be unit-tested on a CPU-only machine (tests/kernels_cuda/host).
// This header must stay includable by a plain C++ compiler: no GPU header outside __CUDACC__ / __HIPCC__.
#include <cstdint>
#include <cstring>

#include "core/half.h"

#if defined(__CUDACC__) || defined(__HIPCC__)
#include "kernels/cuda/gpu_runtime.h"
#define KAIRO_HD __host__ __device__ __forceinline__
#define KAIRO_UNROLL _Pragma("unroll")
#else
#define KAIRO_HD inline
#define KAIRO_UNROLL
#endif

// 1 while compiling device code (CUDA or HIP), 0 for host code and plain C++.
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
#define KAIRO_DEVICE_CODE 1
#else
#define KAIRO_DEVICE_CODE 0
#endif

namespace kairo::kernels::cuda {

// 16 bytes, the widest load one thread issues (LDG.128). Packed weight layouts keep every chunk 16-byte aligned.
struct alignas(16) U128 {
  uint32_t w[4];
};

KAIRO_HD U128 load_u128(const uint8_t* p) {
#if KAIRO_DEVICE_CODE
  const uint4 v = __ldg(reinterpret_cast<const uint4*>(p));
  return U128{{v.x, v.y, v.z, v.w}};
#else
  U128 v;
  std::memcpy(&v, p, sizeof v);
  return v;
#endif
}

// Weight bytes are read exactly once per matmul: the streaming hint keeps them from evicting the activations that
// every warp re-reads from L1/L2.
KAIRO_HD U128 load_u128_stream(const uint8_t* p) {
#if KAIRO_DEVICE_CODE
  const uint4 v = load_once(reinterpret_cast<const uint4*>(p));
  return U128{{v.x, v.y, v.z, v.w}};
#else
  return load_u128(p);
#endif
}

// Word k of v by selects, not by indexing: an index the compiler can't resolve at compile time (a scale picked by
// chunk number) would otherwise move the whole U128 to local memory.
KAIRO_HD uint32_t word_of(const U128& v, int k) { return k == 0 ? v.w[0] : k == 1 ? v.w[1] : k == 2 ? v.w[2] : v.w[3]; }

KAIRO_HD uint8_t byte_of(const U128& v, int i) { return static_cast<uint8_t>(word_of(v, i >> 2) >> (8 * (i & 3))); }

KAIRO_HD uint16_t u16_of(const U128& v, int i) { return static_cast<uint16_t>(word_of(v, i >> 1) >> (16 * (i & 1))); }

KAIRO_HD float half_to_float(uint16_t h) {
#if KAIRO_DEVICE_CODE
  return __half2float(__ushort_as_half(h));
#else
  return f16_to_f32(h);
#endif
}

KAIRO_HD float bf16_to_float(uint16_t b) {
#if KAIRO_DEVICE_CODE
  return __uint_as_float(static_cast<uint32_t>(b) << 16);
#else
  return bf16_to_f32(b);
#endif
}

KAIRO_HD float bits_to_float(uint32_t u) {
#if KAIRO_DEVICE_CODE
  return __uint_as_float(u);
#else
  float f;
  std::memcpy(&f, &u, 4);
  return f;
#endif
}

KAIRO_HD uint16_t load_u16(const uint16_t* p) {
#if KAIRO_DEVICE_CODE
  return __ldg(p);
#else
  return *p;
#endif
}

}  // namespace kairo::kernels::cuda
