#pragma once
// Compute pipelines, created on first use per shader variant and kept for the device's life (through the
// VkPipelineCache). Every shader takes only storage buffers (bindings 0..n-1 of set 0) and push constants.
#include <vulkan/vulkan.h>

#include <map>
#include <string>
#include <string_view>

#include "kernels/vulkan/vk_context.h"

namespace kairo::kernels::vulkan {

inline constexpr uint32_t kMaxBindings = 8;
inline constexpr uint32_t kPushBytes = 128;  // the minimum maxPushConstantsSize every device has

struct Pipeline {
  VkPipeline pipeline = VK_NULL_HANDLE;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
  uint32_t n_bindings = 0;
};

class Pipelines {
 public:
  explicit Pipelines(const Context& ctx) : ctx_(ctx) {}
  Pipelines(const Pipelines&) = delete;
  Pipelines& operator=(const Pipelines&) = delete;
  ~Pipelines();

  // The pipeline of variant `name` (see spirv_registry.h) with n_bindings storage buffers. An unknown variant is
  // a programmer error; a driver failure throws DeviceLost.
  const Pipeline& get(std::string_view name, uint32_t n_bindings);

 private:
  const Context& ctx_;
  std::map<std::string, Pipeline, std::less<>> pipelines_;
};

}  // namespace kairo::kernels::vulkan
