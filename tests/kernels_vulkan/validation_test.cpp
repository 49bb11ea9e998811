// The CI gate itself: with KAIRO_VULKAN_VALIDATION=1 the Khronos validation layer is loaded and a real validation
// message (here a buffer copy past the end of its buffer, VUID-vkCmdCopyBuffer-srcOffset-00113 and friends) aborts
// the process, so any test that provokes one fails instead of passing with a warning on stderr.
#include <cstdlib>

#include "vk_test_util.h"

namespace kairo::kernels::vulkan {
namespace {

TEST(VulkanValidationDeathTest, AValidationMessageAbortsTheProcess) {
  ::testing::FLAGS_gtest_death_test_style = "threadsafe";  // the child re-runs the test binary from the start
  const char* env = std::getenv("KAIRO_VULKAN_VALIDATION");
  ASSERT_TRUE(env != nullptr && std::string(env) == "1") << "the Vulkan tests run with KAIRO_VULKAN_VALIDATION=1";
  EXPECT_DEATH(
      {
        auto d = open_device(0);
        if (!d.ok()) std::abort();
        auto a = (*d)->allocate(256, "validation test source");
        auto b = (*d)->allocate(256, "validation test destination");
        (*d)->copy(*a, *b, 4096);  // 4 KiB out of 256-byte buffers
        (*d)->synchronize();
      },
      "vulkan validation error");
}

}  // namespace
}  // namespace kairo::kernels::vulkan
