#pragma once
// Helpers for the Vulkan-only device tests: the conformance suite's helpers (tests/device_ops), with the Vulkan device
// as the device under test (device 0; a missing device fails the test, CI installs lavapipe).
#include "device_ops/device_ops_util.h"
#include "kernels/vulkan/vulkan_device.h"

namespace kairo::kernels::vulkan::testing {

using device_ops::testing::bitwise_equal;
using device_ops::testing::from_device;
using device_ops::testing::rel_error;
using device_ops::testing::test_device;
using device_ops::testing::to_device;
using device_ops::testing::zeros;

}  // namespace kairo::kernels::vulkan::testing

#define KAIRO_VK_DEVICE(var)                                                             \
  std::shared_ptr<Device> var = ::kairo::kernels::device_ops::testing::test_device(); \
  ASSERT_NE(var, nullptr) << "no Vulkan device (install mesa-vulkan-drivers)"
