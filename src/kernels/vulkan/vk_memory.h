#pragma once
// Buffers: one VkBuffer over its own VkDeviceMemory (no sub-allocation: weights, KV layers and step buffers are
// few and large). Device buffers prefer DEVICE_LOCAL memory and are mapped when that memory is also host-visible
// and coherent (lavapipe, integrated GPUs), so uploads and downloads skip the staging copy there.
#include <vulkan/vulkan.h>

#include <cstdint>

#include "core/result.h"
#include "kernels/vulkan/vk_context.h"

namespace kairo::kernels::vulkan {

enum class BufferKind {
  Device,   // storage + transfer src/dst; DEVICE_LOCAL preferred
  Staging,  // host-visible and coherent, mapped (uploads, downloads, per-step inputs)
};

struct Buffer {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  uint64_t size = 0;
  void* mapped = nullptr;  // non-null when the host can read and write it directly
};

// The error names the size, what it is for and the limit or the failure.
Result<Buffer> create_buffer(const Context& ctx, uint64_t bytes, BufferKind kind, const char* what);
void destroy_buffer(const Context& ctx, Buffer& b);

}  // namespace kairo::kernels::vulkan
