#pragma once
// The Vulkan compute device: kernels::Device over one Vulkan physical device. Ops are recorded as compute dispatches
// into one command buffer per step (kernels/device.h); shaders are GLSL compiled at build time (shaders/).
//
// Set KAIRO_VULKAN_VALIDATION=1 to run with the Khronos validation layer: any warning or error it reports is
// printed and aborts the process (the tests run this way).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/result.h"
#include "kernels/device.h"

namespace kairo::kernels::vulkan {

struct MemoryHeapInfo {
  uint64_t size_bytes = 0;
  bool device_local = false;
  uint64_t budget_bytes = 0;  // VK_EXT_memory_budget, when budget_known
  uint64_t usage_bytes = 0;
  bool budget_known = false;
};

struct VulkanDeviceInfo {
  int index = 0;
  std::string name;
  std::string type;  // "discrete", "integrated", "virtual", "cpu", "other"
  std::string driver;
  std::string api_version;  // "1.3.230"
  uint32_t vendor_id = 0, device_id = 0;
  std::vector<MemoryHeapInfo> heaps;
  uint32_t subgroup_size = 0;
  bool fp16 = false, int8 = false, storage_16bit = false, storage_8bit = false, integer_dot_product = false,
       cooperative_matrix = false;
  uint64_t max_storage_buffer_range = 0, max_memory_allocation_size = 0;
  uint64_t max_buffer_size = 0;  // maintenance4, else 0
  uint32_t max_workgroup_invocations = 0, max_shared_memory_bytes = 0, min_storage_buffer_offset_alignment = 0;
};

// Every Vulkan device. The error says what was found and which packages give a driver.
Result<std::vector<VulkanDeviceInfo>> list_devices();
Result<std::shared_ptr<Device>> open_device(int index);

// Read bandwidth of device memory (GB/s): a shader streams a buffer of `bytes` (capped at the largest allocation);
// warm-up run, then the median of several timed runs.
Result<double> measure_read_bandwidth(Device& device, uint64_t bytes);

// KV cache dtypes the Vulkan attention and kv_write support (F32, F16, BF16); the error names the alternatives.
// Check before sizing a KV cache for this device: kv_write/attention with another dtype abort.
Status check_kv_dtype(DType dtype);

}  // namespace kairo::kernels::vulkan
