#pragma once
// Command recording for steps: one command buffer, opened on the first command after a submission, submitted once
// (flush) and waited on with a fence. Descriptor sets come from a pool reset at every flush; when it runs dry
// mid-step the recorded work is submitted and waited for, the pool reset, and recording goes on.
#include <vulkan/vulkan.h>

#include <cstdint>
#include <span>

#include "kernels/vulkan/vk_context.h"
#include "kernels/vulkan/vk_pipelines.h"

namespace kairo::kernels::vulkan {

class Recorder {
 public:
  explicit Recorder(const Context& ctx);
  Recorder(const Recorder&) = delete;
  Recorder& operator=(const Recorder&) = delete;
  ~Recorder();

  // One dispatch of `p` over groups (gx, gy, gz) with bindings 0..n-1, then a global memory barrier so the next
  // command sees its writes.
  void dispatch(const Pipeline& p, std::span<const VkDescriptorBufferInfo> bindings, const void* push,
                uint32_t push_bytes, uint32_t gx, uint32_t gy, uint32_t gz = 1);
  void copy(VkBuffer src, uint64_t src_offset, VkBuffer dst, uint64_t dst_offset, uint64_t bytes);
  void fill_zero(VkBuffer dst, uint64_t offset, uint64_t bytes);
  // The open command buffer (opened if none is), for commands this class does not wrap (timestamps).
  VkCommandBuffer command_buffer();

  bool pending() const { return open_; }
  // Submits what was recorded and waits for it; nothing to do when nothing is pending. Throws DeviceLost.
  void flush();

 private:
  void barrier();
  VkDescriptorSet allocate_set(VkDescriptorSetLayout layout);

  const Context& ctx_;
  VkCommandBuffer cmd_ = VK_NULL_HANDLE;
  VkFence fence_ = VK_NULL_HANDLE;
  VkDescriptorPool pool_ = VK_NULL_HANDLE;
  bool open_ = false;
};

}  // namespace kairo::kernels::vulkan
