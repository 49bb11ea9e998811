#include "kernels/vulkan/vk_memory.h"

#include <algorithm>
#include <string>


namespace kairo::kernels::vulkan {
namespace {

constexpr VkMemoryPropertyFlags kHostVisible = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;

// The first memory type allowed by `bits` that has all of `want`; -1 if none.
int find_type(const VkPhysicalDeviceMemoryProperties& mp, uint32_t bits, VkMemoryPropertyFlags want) {
  for (uint32_t i = 0; i < mp.memoryTypeCount; ++i) {
    if ((bits & (1u << i)) && (mp.memoryTypes[i].propertyFlags & want) == want) return static_cast<int>(i);
  }
  return -1;
}

std::string mib(uint64_t bytes) { return std::to_string((bytes + (1u << 20) - 1) >> 20) + " MiB"; }

}  // namespace

Result<Buffer> create_buffer(const Context& ctx, uint64_t bytes, BufferKind kind, const char* what) {
  const uint64_t limit = ctx.max_allocation();
  // Whole 16-byte words: shaders read uint (and uvec4) arrays, and a partial last word would be out of bounds
  // (a row of Q4_0 weights may end 2 bytes into one).
  const uint64_t asked = bytes;
  bytes = std::max<uint64_t>((bytes + 15) / 16 * 16, 16);
  if (bytes > limit) {
    bytes = asked;
    return Error{"vulkan: " + std::string(what) + " needs one buffer of " + std::to_string(bytes) + " bytes (" +
                 mib(bytes) + "), over the " + std::to_string(limit) + " bytes (" + mib(limit) + ") that " +
                 ctx.info.name +
                 " can allocate and bind at once (min of maxMemoryAllocationSize and maxStorageBufferRange): "
                 "use a smaller context, batch or KV block count"};
  }
  Buffer b;
  b.size = bytes;
  VkBufferCreateInfo bci{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  bci.size = bytes;
  bci.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  bci.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  VkResult r = vkCreateBuffer(ctx.device, &bci, nullptr, &b.buffer);
  if (r != VK_SUCCESS) return Error{std::string("vulkan: vkCreateBuffer for ") + what + " failed: " + vk_result_name(r)};
  VkMemoryRequirements req{};
  vkGetBufferMemoryRequirements(ctx.device, b.buffer, &req);

  int type = -1;
  if (kind == BufferKind::Device) {
    type = find_type(ctx.memory, req.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT | kHostVisible);
    if (type < 0) type = find_type(ctx.memory, req.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
    if (type < 0) type = find_type(ctx.memory, req.memoryTypeBits, 0);
  } else {
    type = find_type(ctx.memory, req.memoryTypeBits, kHostVisible | VK_MEMORY_PROPERTY_HOST_CACHED_BIT);
    if (type < 0) type = find_type(ctx.memory, req.memoryTypeBits, kHostVisible);
  }
  if (type < 0) {
    vkDestroyBuffer(ctx.device, b.buffer, nullptr);
    return Error{std::string("vulkan: no memory type for ") + what + " on " + ctx.info.name};
  }
  VkMemoryAllocateInfo ai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  ai.allocationSize = req.size;
  ai.memoryTypeIndex = static_cast<uint32_t>(type);
  r = vkAllocateMemory(ctx.device, &ai, nullptr, &b.memory);
  if (r != VK_SUCCESS) {
    vkDestroyBuffer(ctx.device, b.buffer, nullptr);
    return Error{"vulkan: allocating " + std::to_string(bytes) + " bytes (" + mib(bytes) + ") for " + what + " on " +
                 ctx.info.name + " failed with " + vk_result_name(r) +
                 ": lower --mem-budget-gb / --kv-cache-memory or use a smaller model"};
  }
  vkBindBufferMemory(ctx.device, b.buffer, b.memory, 0);
  if ((ctx.memory.memoryTypes[type].propertyFlags & kHostVisible) == kHostVisible) {
    r = vkMapMemory(ctx.device, b.memory, 0, VK_WHOLE_SIZE, 0, &b.mapped);
    if (r != VK_SUCCESS) b.mapped = nullptr;  // still usable through staging copies
  }
  return b;
}

void destroy_buffer(const Context& ctx, Buffer& b) {
  if (b.mapped != nullptr) vkUnmapMemory(ctx.device, b.memory);
  if (b.buffer != VK_NULL_HANDLE) vkDestroyBuffer(ctx.device, b.buffer, nullptr);
  if (b.memory != VK_NULL_HANDLE) vkFreeMemory(ctx.device, b.memory, nullptr);
  b = Buffer{};
}

}  // namespace kairo::kernels::vulkan
