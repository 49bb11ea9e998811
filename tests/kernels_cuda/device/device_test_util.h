#pragma once
// Helpers for the device tests: device copies of host vectors and the comparison metrics of the CPU kernel tests.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <vector>

#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/cuda_context.h"
#include "kernels/cuda/device_memory.h"
#include "kernels/kernel_test_util.h"

namespace kairo::kernels::cuda::testing {

using kernels::testing::compare;
using kernels::testing::describe;
using kernels::testing::Diff;
using kernels::testing::random_floats;

template <typename T>
DeviceBuffer to_device(const std::vector<T>& v) {
  DeviceBuffer b(v.size() * sizeof(T));
  CUDA_CHECK(cudaMemcpy(b.data(), v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice));
  return b;
}

template <typename T>
std::vector<T> to_host(const DeviceBuffer& b, size_t n) {
  CudaContext::get().synchronize();
  std::vector<T> v(n);
  CUDA_CHECK(cudaMemcpy(v.data(), b.data(), n * sizeof(T), cudaMemcpyDeviceToHost));
  return v;
}

inline double rel_rms(const Diff& d) { return d.rms_ref > 0 ? d.rms_err / d.rms_ref : d.rms_err; }

}  // namespace kairo::kernels::cuda::testing
