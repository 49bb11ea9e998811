#pragma once
// Instance, physical device (capabilities and limits), logical device with one compute queue, command pool and
// pipeline cache; the validation layer and its messenger when KAIRO_VULKAN_VALIDATION=1.
#include <vulkan/vulkan.h>

#include <memory>
#include <string>

#include "core/result.h"
#include "kernels/vulkan/vulkan_device.h"

namespace kairo::kernels::vulkan {

const char* vk_result_name(VkResult r);
// Throws kernels::DeviceLost naming `what` and the result when r is not VK_SUCCESS: a failed submission, wait or
// object creation mid-run leaves the step unrecoverable.
void vk_check(VkResult r, const char* what);

struct Context {
  VkInstance instance = VK_NULL_HANDLE;
  VkDebugUtilsMessengerEXT messenger = VK_NULL_HANDLE;
  VkPhysicalDevice physical = VK_NULL_HANDLE;
  VulkanDeviceInfo info;
  VkPhysicalDeviceLimits limits{};
  VkPhysicalDeviceMemoryProperties memory{};
  bool has_memory_budget = false;
  VkDevice device = VK_NULL_HANDLE;
  uint32_t queue_family = 0;
  VkQueue queue = VK_NULL_HANDLE;
  VkCommandPool command_pool = VK_NULL_HANDLE;
  VkPipelineCache pipeline_cache = VK_NULL_HANDLE;
  bool timestamps = false;  // compute-queue timestamps are valid
  // The weight shaders read bytes through 8/16-bit storage (the device has both features, enabled at creation)
  // instead of shifting them out of 32-bit words. KAIRO_VULKAN_PORTABLE_SHADERS=1 keeps the 32-bit variants (tests
  // compare the two bit for bit).
  bool byte_storage = false;
  double timestamp_period_ns = 1.0;

  Context() = default;
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;
  ~Context();

  // min(maxMemoryAllocationSize, maxStorageBufferRange): every buffer must be bindable whole.
  uint64_t max_allocation() const;
  // The heaps now (budget and usage refreshed where VK_EXT_memory_budget is present).
  std::vector<MemoryHeapInfo> heaps() const;
};

bool validation_requested();
Result<std::unique_ptr<Context>> open_context(int index);

}  // namespace kairo::kernels::vulkan
