// measure_read_bandwidth: the read ceiling of device memory for `bench roofline --device vulkan`.
#include <algorithm>
#include <chrono>
#include <vector>

#include "kernels/vulkan/vk_device_impl.h"
#include "kernels/vulkan/vulkan_device.h"

namespace kairo::kernels::vulkan {
namespace {

constexpr int kRuns = 7;
constexpr uint32_t kGroups = 1024;  // enough workgroups to fill any device; each loops over its share

struct BandwidthPush {
  uint32_t n_vec4;
};

}  // namespace

Result<double> measure_read_bandwidth(Device& device, uint64_t bytes) {
  auto* vk = dynamic_cast<VulkanDevice*>(&device);
  if (vk == nullptr) return Error{"measure_read_bandwidth: " + device.name() + " is not a Vulkan device"};
  const Context& ctx = vk->context();
  bytes = std::min<uint64_t>({bytes, vk->max_allocation_bytes(), 16ull * UINT32_MAX}) / 16 * 16;
  if (bytes < (1u << 20)) return Error{"measure_read_bandwidth: give at least 1 MiB to stream"};
  KAIRO_TRY_ASSIGN(DeviceSpan data, vk->allocate(bytes, "the bandwidth probe buffer"));
  auto sink = vk->allocate(kGroups * sizeof(uint32_t), "the bandwidth probe output");
  if (!sink.ok()) {
    vk->free(data);
    return sink.error();
  }
  const Pipeline& p = vk->pipelines().get("read_bandwidth", 2);
  const VkDescriptorBufferInfo b[2] = {{vk->vk_buffer(data), 0, VK_WHOLE_SIZE}, {vk->vk_buffer(*sink), 0, VK_WHOLE_SIZE}};
  const BandwidthPush pc{static_cast<uint32_t>(bytes / 16)};

  VkQueryPool queries = VK_NULL_HANDLE;
  if (ctx.timestamps) {
    VkQueryPoolCreateInfo qci{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
    qci.queryType = VK_QUERY_TYPE_TIMESTAMP;
    qci.queryCount = 2;
    if (vkCreateQueryPool(ctx.device, &qci, nullptr, &queries) != VK_SUCCESS) queries = VK_NULL_HANDLE;
  }
  Recorder& rec = vk->recorder();
  rec.flush();
  std::vector<double> seconds;
  for (int run = 0; run <= kRuns; ++run) {  // run 0 warms up (pipeline creation, first touch of the pages)
    if (queries != VK_NULL_HANDLE) {
      VkCommandBuffer cmd = rec.command_buffer();
      vkCmdResetQueryPool(cmd, queries, 0, 2);
      vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, queries, 0);
    }
    const auto t0 = std::chrono::steady_clock::now();
    rec.dispatch(p, b, &pc, sizeof(pc), kGroups, 1);
    if (queries != VK_NULL_HANDLE) {
      vkCmdWriteTimestamp(rec.command_buffer(), VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, queries, 1);
    }
    rec.flush();
    const double host_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    double s = host_s;
    if (queries != VK_NULL_HANDLE) {
      uint64_t ts[2] = {0, 0};
      if (vkGetQueryPoolResults(ctx.device, queries, 0, 2, sizeof(ts), ts, sizeof(uint64_t),
                                VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT) == VK_SUCCESS &&
          ts[1] > ts[0]) {
        s = static_cast<double>(ts[1] - ts[0]) * ctx.timestamp_period_ns * 1e-9;
      }
    }
    if (run > 0) seconds.push_back(s);
  }
  if (queries != VK_NULL_HANDLE) vkDestroyQueryPool(ctx.device, queries, nullptr);
  vk->free(*sink);
  vk->free(data);
  std::sort(seconds.begin(), seconds.end());
  const double median = seconds[seconds.size() / 2];
  if (median <= 0) return Error{"measure_read_bandwidth: the timed runs took no measurable time"};
  return static_cast<double>(bytes) / median * 1e-9;
}

}  // namespace kairo::kernels::vulkan
