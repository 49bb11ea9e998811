#include <gtest/gtest.h>

#include "devices/open_device.h"

namespace kairo::devices {
namespace {

TEST(ListDevices, NamesTheCpuWithItsMemoryAndKernels) {
  const nlohmann::json j = list_devices_json();
  EXPECT_EQ(j["cpu"]["device"], "cpu");
  EXPECT_GT(j["cpu"]["memory_total_bytes"].get<uint64_t>(), 0u);
  EXPECT_GE(j["cpu"]["memory_total_bytes"].get<uint64_t>(), j["cpu"]["memory_available_bytes"].get<uint64_t>());
  EXPECT_GT(j["cpu"]["cores"].get<int>(), 0);
  EXPECT_FALSE(j["cpu"]["isa"].get<std::string>().empty());
  // The kernel family names its level (avx2 / avx-vnni, neon / neon-sdot / neon-i8mm, or the level itself).
  const std::string isa = j["cpu"]["isa"].get<std::string>(), kernels = j["cpu"]["kernels"].get<std::string>();
  EXPECT_TRUE(kernels.rfind(isa, 0) == 0 || (isa == "avx2" && kernels == "avx-vnni")) << isa << " " << kernels;
  EXPECT_TRUE(j["cuda"].contains("error") || !j["cuda"]["devices"].empty());
  const std::string text = format_devices(j);
  EXPECT_EQ(text.rfind("cpu ", 0), 0u) << text;
}

#ifdef KAIRO_HAS_VULKAN
// CI installs Mesa's lavapipe, so a Vulkan device is always there; its real limits must come through.
TEST(ListDevices, ListsEachVulkanDeviceWithItsLimits) {
  const nlohmann::json j = list_devices_json();
  ASSERT_FALSE(j["vulkan"].contains("error")) << j["vulkan"]["error"];
  ASSERT_FALSE(j["vulkan"]["devices"].empty());
  for (const auto& d : j["vulkan"]["devices"]) {
    EXPECT_EQ(d["device"].get<std::string>().rfind("vulkan:", 0), 0u);
    EXPECT_GT(d["max_storage_buffer_range"].get<uint64_t>(), 0u);
    EXPECT_GT(d["max_memory_allocation_size"].get<uint64_t>(), 0u);
    EXPECT_GT(d["subgroup_size"].get<uint32_t>(), 0u);
    EXPECT_FALSE(d["memory_heaps"].empty());
    if (d["name"].get<std::string>().find("llvmpipe") != std::string::npos) {
      EXPECT_EQ(d["type"], "cpu");
      EXPECT_EQ(d["max_storage_buffer_range"].get<uint64_t>(), 134217728u);  // lavapipe's 128 MiB
    }
  }
  EXPECT_NE(format_devices(j).find("vulkan:0"), std::string::npos);
}

TEST(OpenDevice, NamesTheDevicesFoundWhenTheIndexIsTooLarge) {
  auto r = open_device("vulkan:99");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("there is no Vulkan device 99; found vulkan:0"), std::string::npos)
      << r.error().message;
}
#endif

// Three worlds: built without CUDA (the message says how to build it), built with CUDA on a machine without a GPU
// (the message says why there is none), or a GPU (it opens, and another index says what was found).
TEST(OpenDevice, CudaOpensOrSaysWhatToChange) {
  const nlohmann::json cuda = list_devices_json()["cuda"];
  auto r = open_device("cuda");
  if (cuda.contains("error") && cuda["error"].get<std::string>().find("built without CUDA") != std::string::npos) {
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().message.find("rebuild with -DKAIRO_CUDA=ON"), std::string::npos) << r.error().message;
    EXPECT_NE(r.error().message.find("--device vulkan"), std::string::npos) << r.error().message;
  } else if (cuda["devices"].empty()) {
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().message.find("CUDA device"), std::string::npos) << r.error().message;
  } else {
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_EQ((*r)->kind(), kernels::DeviceKind::Cuda);
    EXPECT_EQ((*r)->name().rfind("cuda:0 (", 0), 0u) << (*r)->name();
    auto far = open_device("cuda:99");
    ASSERT_FALSE(far.ok());
    EXPECT_NE(far.error().message.find("there is no CUDA device 99; found cuda:0"), std::string::npos);
  }
}

}  // namespace
}  // namespace kairo::devices
