#pragma once
// Helpers for the Vulkan device tests: the device under test (device 0, opened once per process; a missing device
// fails the test, CI installs lavapipe) and float buffers moved to and from it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

#include "kernels/device.h"
#include "kernels/vulkan/vulkan_device.h"

namespace kairo::kernels::vulkan::testing {

inline std::shared_ptr<Device> test_device() {
  static std::shared_ptr<Device> device = [] {
    auto d = open_device(0);
    EXPECT_TRUE(d.ok()) << (d.ok() ? "" : d.error().message);
    return d.ok() ? *d : nullptr;
  }();
  return device;
}

#define KAIRO_VK_DEVICE(var)                 \
  std::shared_ptr<Device> var = ::kairo::kernels::vulkan::testing::test_device(); \
  ASSERT_NE(var, nullptr) << "no Vulkan device (install mesa-vulkan-drivers)"

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

}  // namespace kairo::kernels::vulkan::testing
