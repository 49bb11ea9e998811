#pragma once
// The device conformance suite (tests/device_ops): every op of kernels::Device against the scalar reference, and the
// batch-invariance contract, written once against the interface. Each non-CPU device's test binary compiles these
// sources with its own device_under_test_*.cpp, which opens the device under test and names the weight types it
// takes. A missing device fails the test (CI installs lavapipe for Vulkan; the CUDA binary runs only where
// scripts/gpu-check.sh finds a GPU).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <vector>

#include "kernels/device.h"
#include "tensor/dtype.h"

namespace kairo::kernels::device_ops::testing {

// Defined by each device's test binary.
std::shared_ptr<Device> open_device_under_test();
std::vector<DType> device_weight_types();

// Opened once per process.
inline std::shared_ptr<Device> test_device() {
  static std::shared_ptr<Device> device = open_device_under_test();
  return device;
}

#define KAIRO_TEST_DEVICE(var)                                                           \
  std::shared_ptr<Device> var = ::kairo::kernels::device_ops::testing::test_device(); \
  ASSERT_NE(var, nullptr) << "the device under test did not open"

template <typename T>
DeviceSpan to_device(Device& d, const std::vector<T>& host) {
  auto s = d.allocate(std::max<size_t>(host.size() * sizeof(T), 4), "test input");
  EXPECT_TRUE(s.ok());
  d.upload(*s, host.data(), host.size() * sizeof(T));
  return *s;
}

template <typename T>
std::vector<T> from_device(Device& d, DeviceSpan s, size_t n) {
  std::vector<T> host(n);
  d.download(s, host.data(), n * sizeof(T));
  return host;
}

inline DeviceSpan zeros(Device& d, size_t bytes) {
  auto s = d.allocate(bytes, "test output");
  EXPECT_TRUE(s.ok());
  return *s;
}

// max |got - ref| / max |ref|: the error relative to the output vector's scale.
inline double rel_error(const std::vector<float>& got, const std::vector<float>& ref) {
  double max_diff = 0, max_ref = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    max_diff = std::max(max_diff, std::fabs(static_cast<double>(got[i]) - ref[i]));
    max_ref = std::max(max_ref, std::fabs(static_cast<double>(ref[i])));
  }
  return max_ref > 0 ? max_diff / max_ref : max_diff;
}

inline bool bitwise_equal(const float* a, const float* b, size_t n) { return std::memcmp(a, b, n * sizeof(float)) == 0; }

}  // namespace kairo::kernels::device_ops::testing
