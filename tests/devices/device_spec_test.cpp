#include "devices/device_spec.h"

#include <gtest/gtest.h>

namespace kairo::devices {
namespace {

TEST(DeviceSpec, ParsesKindsAndIndices) {
  auto cpu = parse_device_spec("cpu");
  ASSERT_TRUE(cpu.ok());
  EXPECT_EQ(cpu->kind, kernels::DeviceKind::Cpu);
  auto vk = parse_device_spec("vulkan");
  ASSERT_TRUE(vk.ok());
  EXPECT_EQ(vk->kind, kernels::DeviceKind::Vulkan);
  EXPECT_EQ(vk->index, 0);
  auto vk2 = parse_device_spec("vulkan:2");
  ASSERT_TRUE(vk2.ok());
  EXPECT_EQ(vk2->index, 2);
  EXPECT_EQ(to_string(*vk2), "vulkan:2");
  auto cuda = parse_device_spec("cuda:1");
  ASSERT_TRUE(cuda.ok());
  EXPECT_EQ(cuda->kind, kernels::DeviceKind::Cuda);
  EXPECT_EQ(to_string(*cpu), "cpu");
}

TEST(DeviceSpec, RefusesWhatIsNotADeviceWithTheChoices) {
  for (const char* bad : {"gpu", "", "vulkan:", "vulkan:x", "vulkan:-1", "vulkan:1x", "cpu:0", "VULKAN"}) {
    auto r = parse_device_spec(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.error().message.find("--device"), std::string::npos) << r.error().message;
  }
  EXPECT_EQ(parse_device_spec("gpu").error().message,
            "--device 'gpu' is not a device: use cpu, vulkan[:N] or cuda[:N] (`kairo devices` lists them)");
}

}  // namespace
}  // namespace kairo::devices
