#include "kernels/vulkan/vk_step.h"

#include <cassert>

namespace kairo::kernels::vulkan {
namespace {

constexpr uint32_t kSetsPerPool = 2048;

}  // namespace

Recorder::Recorder(const Context& ctx) : ctx_(ctx) {
  VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  ai.commandPool = ctx_.command_pool;
  ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  ai.commandBufferCount = 1;
  vk_check(vkAllocateCommandBuffers(ctx_.device, &ai, &cmd_), "vkAllocateCommandBuffers");
  VkFenceCreateInfo fci{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  vk_check(vkCreateFence(ctx_.device, &fci, nullptr, &fence_), "vkCreateFence");
  VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, kSetsPerPool * kMaxBindings};
  VkDescriptorPoolCreateInfo pci{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
  pci.maxSets = kSetsPerPool;
  pci.poolSizeCount = 1;
  pci.pPoolSizes = &size;
  vk_check(vkCreateDescriptorPool(ctx_.device, &pci, nullptr, &pool_), "vkCreateDescriptorPool");
}

Recorder::~Recorder() {
  if (open_) {
    try {
      flush();
    } catch (const DeviceLost&) {
      // Destruction must not throw; the device is going away anyway.
    }
  }
  vkDestroyDescriptorPool(ctx_.device, pool_, nullptr);
  vkDestroyFence(ctx_.device, fence_, nullptr);
  vkFreeCommandBuffers(ctx_.device, ctx_.command_pool, 1, &cmd_);
}

VkCommandBuffer Recorder::command_buffer() {
  if (!open_) {
    VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    vk_check(vkBeginCommandBuffer(cmd_, &bi), "vkBeginCommandBuffer");
    open_ = true;
  }
  return cmd_;
}

void Recorder::flush() {
  if (!open_) return;
  open_ = false;
  vk_check(vkEndCommandBuffer(cmd_), "vkEndCommandBuffer");
  VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  si.commandBufferCount = 1;
  si.pCommandBuffers = &cmd_;
  vk_check(vkQueueSubmit(ctx_.queue, 1, &si, fence_), "vkQueueSubmit");
  vk_check(vkWaitForFences(ctx_.device, 1, &fence_, VK_TRUE, UINT64_MAX), "vkWaitForFences");
  vk_check(vkResetFences(ctx_.device, 1, &fence_), "vkResetFences");
  vk_check(vkResetCommandBuffer(cmd_, 0), "vkResetCommandBuffer");
  vk_check(vkResetDescriptorPool(ctx_.device, pool_, 0), "vkResetDescriptorPool");
}

// Compute and transfer both read and write storage buffers; one global barrier after every command orders each
// command after everything recorded before it (ops are few and large, so the lost overlap is small).
void Recorder::barrier() {
  VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  mb.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT |
                     VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_HOST_READ_BIT;
  const VkPipelineStageFlags stages = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
  vkCmdPipelineBarrier(cmd_, stages, stages | VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &mb, 0, nullptr, 0, nullptr);
}

VkDescriptorSet Recorder::allocate_set(VkDescriptorSetLayout layout) {
  VkDescriptorSetAllocateInfo ai{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
  ai.descriptorPool = pool_;
  ai.descriptorSetCount = 1;
  ai.pSetLayouts = &layout;
  VkDescriptorSet set = VK_NULL_HANDLE;
  VkResult r = vkAllocateDescriptorSets(ctx_.device, &ai, &set);
  if (r == VK_ERROR_OUT_OF_POOL_MEMORY || r == VK_ERROR_FRAGMENTED_POOL) {
    flush();  // the sets in use belong to recorded work: run it, then the pool is free again
    r = vkAllocateDescriptorSets(ctx_.device, &ai, &set);
  }
  vk_check(r, "vkAllocateDescriptorSets");
  return set;
}

void Recorder::dispatch(const Pipeline& p, std::span<const VkDescriptorBufferInfo> bindings, const void* push,
                        uint32_t push_bytes, uint32_t gx, uint32_t gy, uint32_t gz) {
  assert(bindings.size() == p.n_bindings && push_bytes <= kPushBytes);
  if (gx == 0 || gy == 0 || gz == 0) return;
  const VkDescriptorSet set = allocate_set(p.set_layout);
  VkWriteDescriptorSet writes[kMaxBindings]{};
  for (uint32_t i = 0; i < p.n_bindings; ++i) {
    writes[i] = VkWriteDescriptorSet{VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
    writes[i].dstSet = set;
    writes[i].dstBinding = i;
    writes[i].descriptorCount = 1;
    writes[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    writes[i].pBufferInfo = &bindings[i];
  }
  vkUpdateDescriptorSets(ctx_.device, p.n_bindings, writes, 0, nullptr);
  VkCommandBuffer cmd = command_buffer();
  vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, p.pipeline);
  vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, p.layout, 0, 1, &set, 0, nullptr);
  if (push_bytes > 0) vkCmdPushConstants(cmd, p.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, push_bytes, push);
  vkCmdDispatch(cmd, gx, gy, gz);
  barrier();
}

void Recorder::copy(VkBuffer src, uint64_t src_offset, VkBuffer dst, uint64_t dst_offset, uint64_t bytes) {
  if (bytes == 0) return;
  VkCommandBuffer cmd = command_buffer();
  VkBufferCopy region{src_offset, dst_offset, bytes};
  vkCmdCopyBuffer(cmd, src, dst, 1, &region);
  barrier();
}

void Recorder::fill_zero(VkBuffer dst, uint64_t offset, uint64_t bytes) {
  VkCommandBuffer cmd = command_buffer();
  vkCmdFillBuffer(cmd, dst, offset, bytes, 0);
  barrier();
}

}  // namespace kairo::kernels::vulkan
