#include "devices/open_device.h"

#include <fstream>

#include "core/format.h"
#include "core/thread_pool.h"
#include "devices/device_spec.h"
#include "kernels/cpu/cpu_features.h"
#include "plan/device_catalog.h"
#ifdef KAIRO_HAS_VULKAN
#include "kernels/vulkan/vulkan_device.h"
#endif
#ifdef KAIRO_HAS_CUDA
#include "kernels/cuda/bandwidth.h"
#include "kernels/cuda/cuda_device.h"
#endif

namespace kairo::devices {
namespace {

// The model name line of /proc/cpuinfo ("AMD EPYC", "Intel(R) Xeon(R) ..."), or "cpu".
std::string cpu_model_name() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) != 0) continue;
    const size_t colon = line.find(':');
    if (colon != std::string::npos && colon + 2 <= line.size()) return line.substr(colon + 2);
  }
  return "cpu";
}

nlohmann::json cpu_json() {
  const auto dev = kernels::make_cpu_device();
  const kernels::DeviceMemoryInfo mem = dev->memory_info();
  return {{"device", "cpu"},
          {"name", cpu_model_name()},
          {"type", "cpu"},
          {"isa", kernels::cpu::isa_name(kernels::cpu::best_isa())},
          {"kernels", kernels::cpu::kernel_path_name()},
          {"cores", ThreadPool::available_cores()},
          {"memory_total_bytes", mem.total_bytes},
          {"memory_available_bytes", mem.free_bytes}};
}

#ifdef KAIRO_HAS_VULKAN
nlohmann::json vulkan_json() {
  auto listed = kernels::vulkan::list_devices();
  if (!listed) return {{"error", listed.error().message}, {"devices", nlohmann::json::array()}};
  nlohmann::json devices = nlohmann::json::array();
  for (const kernels::vulkan::VulkanDeviceInfo& d : *listed) {
    nlohmann::json heaps = nlohmann::json::array();
    for (const auto& h : d.heaps) {
      nlohmann::json heap = {{"size_bytes", h.size_bytes}, {"device_local", h.device_local}};
      if (h.budget_known) {
        heap["budget_bytes"] = h.budget_bytes;
        heap["usage_bytes"] = h.usage_bytes;
      }
      heaps.push_back(heap);
    }
    devices.push_back({{"device", "vulkan:" + std::to_string(d.index)},
                       {"name", d.name},
                       {"type", d.type},
                       {"driver", d.driver},
                       {"api_version", d.api_version},
                       {"vendor_id", d.vendor_id},
                       {"device_id", d.device_id},
                       {"memory_heaps", heaps},
                       {"subgroup_size", d.subgroup_size},
                       {"fp16", d.fp16},
                       {"int8", d.int8},
                       {"storage_16bit", d.storage_16bit},
                       {"storage_8bit", d.storage_8bit},
                       {"integer_dot_product", d.integer_dot_product},
                       {"cooperative_matrix", d.cooperative_matrix},
                       {"max_storage_buffer_range", d.max_storage_buffer_range},
                       {"max_memory_allocation_size", d.max_memory_allocation_size},
                       {"max_buffer_size", d.max_buffer_size},
                       {"max_workgroup_invocations", d.max_workgroup_invocations},
                       {"max_shared_memory_bytes", d.max_shared_memory_bytes},
                       {"min_storage_buffer_offset_alignment", d.min_storage_buffer_offset_alignment}});
  }
  return {{"devices", devices}};
}
#else
nlohmann::json vulkan_json() {
  return {{"error", "this kairo was built without Vulkan (-DKAIRO_VULKAN=OFF)"}, {"devices", nlohmann::json::array()}};
}
#endif

#ifdef KAIRO_HAS_CUDA
nlohmann::json cuda_json() {
  auto listed = kernels::cuda::list_devices();
  if (!listed) return {{"error", listed.error().message}, {"devices", nlohmann::json::array()}};
  nlohmann::json devices = nlohmann::json::array();
  for (const kernels::cuda::CudaDeviceInfo& d : *listed) {
    nlohmann::json j = {{"device", "cuda:" + std::to_string(d.index)},
                        {"name", d.name},
                        {"compute_capability", std::to_string(d.compute_major) + "." + std::to_string(d.compute_minor)},
                        {"memory_total_bytes", d.total_bytes},
                        {"memory_free_bytes", d.free_bytes},
                        {"multiprocessors", d.n_sms},
                        {"max_shared_memory_per_block", d.max_shared_memory_per_block}};
    // Datasheet bandwidth, when the catalog knows the GPU (`kairo bench roofline --device cuda` measures it).
    if (auto spec = plan::match_gpu(d.name, d.total_bytes); spec.ok()) {
      j["catalog"] = spec->name;
      j["catalog_bandwidth_gbs"] = spec->bandwidth_gbs;
    }
    devices.push_back(j);
  }
  return {{"devices", devices}};
}
#else
nlohmann::json cuda_json() {
  return {{"error", "this kairo was built without CUDA (configure with -DKAIRO_CUDA=ON)"},
          {"devices", nlohmann::json::array()}};
}
#endif

}  // namespace

Result<std::shared_ptr<kernels::Device>> open_device(const std::string& text) {
  KAIRO_TRY_ASSIGN(DeviceSpec spec, parse_device_spec(text));
  switch (spec.kind) {
    case kernels::DeviceKind::Cpu: return kernels::make_cpu_device();
    case kernels::DeviceKind::Vulkan: {
#ifdef KAIRO_HAS_VULKAN
      auto listed = kernels::vulkan::list_devices();
      if (!listed) return Error{"--device " + text + ": " + listed.error().message};
      if (spec.index >= static_cast<int>(listed->size())) {
        std::string found;
        for (const auto& d : *listed) found += strprintf("%svulkan:%d (%s)", found.empty() ? "" : ", ", d.index,
                                                         d.name.c_str());
        return Error{strprintf("--device %s: there is no Vulkan device %d; found %s", text.c_str(), spec.index,
                               found.empty() ? "none" : found.c_str())};
      }
      return kernels::vulkan::open_device(spec.index);
#else
      return Error{"--device " + text + ": this kairo was built without Vulkan; rebuild with -DKAIRO_VULKAN=ON "
                   "(scripts/install-deps.sh installs its packages)"};
#endif
    }
    case kernels::DeviceKind::Cuda: {
#ifdef KAIRO_HAS_CUDA
      auto dev = kernels::cuda::open_device(spec.index);
      if (!dev) return Error{"--device " + text + ": " + dev.error().message};
      return dev;
#else
      return Error{"--device " + text + ": this kairo was built without CUDA; rebuild with -DKAIRO_CUDA=ON (CUDA 12 "
                   "or newer under /usr/local/cuda), or use --device vulkan on an NVIDIA GPU"};
#endif
    }
  }
  return Error{"unknown device"};
}

nlohmann::json list_devices_json() {
  return {{"cpu", cpu_json()},
          {"vulkan", vulkan_json()},
          {"cuda", cuda_json()}};
}

std::string format_devices(const nlohmann::json& j) {
  std::string out;
  const auto& cpu = j["cpu"];
  out += strprintf("cpu        %s, %s kernels, %d cores, %s memory (%s available)\n",
                   cpu["name"].get<std::string>().c_str(), cpu["kernels"].get<std::string>().c_str(),
                   cpu["cores"].get<int>(), human_bytes(cpu["memory_total_bytes"].get<uint64_t>()).c_str(),
                   human_bytes(cpu["memory_available_bytes"].get<uint64_t>()).c_str());
  const auto& vk = j["vulkan"];
  if (vk.contains("error")) out += "vulkan     " + vk["error"].get<std::string>() + "\n";
  for (const auto& d : vk["devices"]) {
    std::string heaps;
    for (const auto& h : d["memory_heaps"]) {
      heaps += strprintf("%s%s%s", heaps.empty() ? "" : " + ", human_bytes(h["size_bytes"].get<uint64_t>()).c_str(),
                         h["device_local"].get<bool>() ? " local" : "");
    }
    std::string features;
    for (const char* f : {"fp16", "int8", "storage_16bit", "storage_8bit", "integer_dot_product", "cooperative_matrix"})
      if (d[f].get<bool>()) features += std::string(features.empty() ? "" : ",") + f;
    out += strprintf("%-10s %s (%s, Vulkan %s, driver %s)\n", d["device"].get<std::string>().c_str(),
                     d["name"].get<std::string>().c_str(), d["type"].get<std::string>().c_str(),
                     d["api_version"].get<std::string>().c_str(), d["driver"].get<std::string>().c_str());
    out += strprintf("           memory %s; subgroup %u; features %s\n", heaps.c_str(),
                     d["subgroup_size"].get<uint32_t>(), features.empty() ? "none" : features.c_str());
    out += strprintf("           max binding %s, max allocation %s, max workgroup %u invocations, %s shared\n",
                     human_bytes(d["max_storage_buffer_range"].get<uint64_t>()).c_str(),
                     human_bytes(d["max_memory_allocation_size"].get<uint64_t>()).c_str(),
                     d["max_workgroup_invocations"].get<uint32_t>(),
                     human_bytes(d["max_shared_memory_bytes"].get<uint32_t>()).c_str());
  }
  const auto& cu = j["cuda"];
  if (cu.contains("error")) out += "cuda       " + cu["error"].get<std::string>() + "\n";
  for (const auto& d : cu["devices"]) {
    out += strprintf("%-10s %s (compute %s, %d multiprocessors), %s memory (%s free)", d["device"].get<std::string>().c_str(),
                     d["name"].get<std::string>().c_str(), d["compute_capability"].get<std::string>().c_str(),
                     d["multiprocessors"].get<int>(), human_bytes(d["memory_total_bytes"].get<uint64_t>()).c_str(),
                     human_bytes(d["memory_free_bytes"].get<uint64_t>()).c_str());
    if (d.contains("catalog_bandwidth_gbs"))
      out += strprintf(", datasheet %.0f GB/s (%s)", d["catalog_bandwidth_gbs"].get<double>(),
                       d["catalog"].get<std::string>().c_str());
    out += "\n";
  }
  return out;
}

Result<double> measure_device_read_bandwidth(kernels::Device& device, uint64_t bytes) {
#ifdef KAIRO_HAS_VULKAN
  if (device.kind() == kernels::DeviceKind::Vulkan) return kernels::vulkan::measure_read_bandwidth(device, bytes);
#endif
#ifdef KAIRO_HAS_CUDA
  if (device.kind() == kernels::DeviceKind::Cuda) {
    const uint64_t cap = std::min<uint64_t>(bytes, device.memory_info().free_bytes / 2);
    return kernels::cuda::measure_read_bandwidth(static_cast<size_t>(cap), 10);
  }
#endif
  return Error{"no read-bandwidth shader for " + device.name() + " (the CPU's is `kairo bench roofline`)"};
}

}  // namespace kairo::devices
