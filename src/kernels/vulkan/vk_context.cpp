#include "kernels/vulkan/vk_context.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace kairo::kernels::vulkan {
namespace {

constexpr const char* kValidationLayer = "VK_LAYER_KHRONOS_validation";
constexpr const char* kDriverHint =
    "install a Vulkan driver: the Debian package mesa-vulkan-drivers gives lavapipe (CPU), radv (AMD) and anv "
    "(Intel); NVIDIA's driver ships its own";

bool has_extension(const std::vector<VkExtensionProperties>& exts, const char* name) {
  return std::any_of(exts.begin(), exts.end(),
                     [&](const VkExtensionProperties& e) { return std::strcmp(e.extensionName, name) == 0; });
}

std::vector<VkExtensionProperties> device_extensions(VkPhysicalDevice pd) {
  uint32_t n = 0;
  vkEnumerateDeviceExtensionProperties(pd, nullptr, &n, nullptr);
  std::vector<VkExtensionProperties> exts(n);
  vkEnumerateDeviceExtensionProperties(pd, nullptr, &n, exts.data());
  return exts;
}

// Validation messages end the process: CI must fail on any of them, and a test that merely logs one passes.
VKAPI_ATTR VkBool32 VKAPI_CALL on_validation_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                     VkDebugUtilsMessageTypeFlagsEXT,
                                                     const VkDebugUtilsMessengerCallbackDataEXT* data, void*) {
  if (severity & (VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT)) {
    std::fprintf(stderr, "vulkan validation %s: %s\n",
                 (severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT) ? "error" : "warning",
                 data->pMessage != nullptr ? data->pMessage : "(no message)");
    std::fflush(stderr);
    std::abort();
  }
  return VK_FALSE;
}

VkDebugUtilsMessengerCreateInfoEXT messenger_info() {
  VkDebugUtilsMessengerCreateInfoEXT ci{VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
  ci.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
  ci.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                   VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
  ci.pfnUserCallback = on_validation_message;
  return ci;
}

struct Instance {
  VkInstance instance = VK_NULL_HANDLE;
  VkDebugUtilsMessengerEXT messenger = VK_NULL_HANDLE;
};

void destroy_instance(Instance& in) {
  if (in.messenger != VK_NULL_HANDLE) {
    auto destroy = reinterpret_cast<PFN_vkDestroyDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(in.instance, "vkDestroyDebugUtilsMessengerEXT"));
    if (destroy != nullptr) destroy(in.instance, in.messenger, nullptr);
  }
  if (in.instance != VK_NULL_HANDLE) vkDestroyInstance(in.instance, nullptr);
  in = Instance{};
}

Result<Instance> create_instance() {
  uint32_t loader_version = VK_API_VERSION_1_0;
  if (vkEnumerateInstanceVersion(&loader_version) != VK_SUCCESS || loader_version < VK_API_VERSION_1_2) {
    return Error{"vulkan: the Vulkan loader supports only API " + std::to_string(VK_API_VERSION_MAJOR(loader_version)) +
                 "." + std::to_string(VK_API_VERSION_MINOR(loader_version)) +
                 "; kairo needs 1.2 (update libvulkan1, or " + kDriverHint + ")"};
  }
  const bool validation = validation_requested();
  std::vector<const char*> layers;
  std::vector<const char*> extensions;
  if (validation) {
    uint32_t n = 0;
    vkEnumerateInstanceLayerProperties(&n, nullptr);
    std::vector<VkLayerProperties> props(n);
    vkEnumerateInstanceLayerProperties(&n, props.data());
    const bool found = std::any_of(props.begin(), props.end(), [](const VkLayerProperties& p) {
      return std::strcmp(p.layerName, kValidationLayer) == 0;
    });
    if (!found) {
      return Error{std::string("vulkan: KAIRO_VULKAN_VALIDATION=1 asks for ") + kValidationLayer +
                   ", which is not installed: install the Debian package vulkan-validationlayers or unset "
                   "KAIRO_VULKAN_VALIDATION"};
    }
    layers.push_back(kValidationLayer);
    extensions.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
  }
  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = "kairo";
  app.pEngineName = "kairo";
  app.apiVersion = std::min<uint32_t>(loader_version, VK_API_VERSION_1_3);
  VkInstanceCreateInfo ci{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  ci.pApplicationInfo = &app;
  ci.enabledLayerCount = static_cast<uint32_t>(layers.size());
  ci.ppEnabledLayerNames = layers.data();
  ci.enabledExtensionCount = static_cast<uint32_t>(extensions.size());
  ci.ppEnabledExtensionNames = extensions.data();
  VkDebugUtilsMessengerCreateInfoEXT mci = messenger_info();
  if (validation) ci.pNext = &mci;  // also covers vkCreateInstance / vkDestroyInstance themselves
  Instance in;
  const VkResult r = vkCreateInstance(&ci, nullptr, &in.instance);
  if (r == VK_ERROR_INCOMPATIBLE_DRIVER) {
    return Error{std::string("vulkan: no Vulkan driver (ICD) found by the loader: ") + kDriverHint};
  }
  if (r != VK_SUCCESS) return Error{std::string("vulkan: vkCreateInstance failed: ") + vk_result_name(r)};
  if (validation) {
    auto create = reinterpret_cast<PFN_vkCreateDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(in.instance, "vkCreateDebugUtilsMessengerEXT"));
    if (create == nullptr || create(in.instance, &mci, nullptr, &in.messenger) != VK_SUCCESS) {
      destroy_instance(in);
      return Error{"vulkan: could not create the VK_EXT_debug_utils messenger for the validation layer"};
    }
  }
  return in;
}

Result<std::vector<VkPhysicalDevice>> physical_devices(VkInstance instance) {
  uint32_t n = 0;
  VkResult r = vkEnumeratePhysicalDevices(instance, &n, nullptr);
  if (r != VK_SUCCESS) return Error{std::string("vulkan: vkEnumeratePhysicalDevices failed: ") + vk_result_name(r)};
  if (n == 0) return Error{std::string("vulkan: the loader found no Vulkan device: ") + kDriverHint};
  std::vector<VkPhysicalDevice> devices(n);
  vkEnumeratePhysicalDevices(instance, &n, devices.data());
  return devices;
}

std::string type_name(VkPhysicalDeviceType t) {
  switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return "discrete";
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return "integrated";
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return "virtual";
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return "cpu";
    default: return "other";
  }
}

std::vector<MemoryHeapInfo> query_heaps(VkPhysicalDevice pd, bool budget) {
  VkPhysicalDeviceMemoryBudgetPropertiesEXT bp{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_BUDGET_PROPERTIES_EXT};
  VkPhysicalDeviceMemoryProperties2 mp{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_PROPERTIES_2};
  if (budget) mp.pNext = &bp;
  vkGetPhysicalDeviceMemoryProperties2(pd, &mp);
  std::vector<MemoryHeapInfo> heaps;
  for (uint32_t i = 0; i < mp.memoryProperties.memoryHeapCount; ++i) {
    MemoryHeapInfo h;
    h.size_bytes = mp.memoryProperties.memoryHeaps[i].size;
    h.device_local = (mp.memoryProperties.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) != 0;
    if (budget) {
      h.budget_bytes = bp.heapBudget[i];
      h.usage_bytes = bp.heapUsage[i];
      h.budget_known = true;
    }
    heaps.push_back(h);
  }
  return heaps;
}

// Capabilities and limits of one physical device. Structures of newer APIs are chained only where the device
// supports them (the validation layer rejects others).
VulkanDeviceInfo probe(VkPhysicalDevice pd, int index, bool* has_budget) {
  const std::vector<VkExtensionProperties> exts = device_extensions(pd);
  VkPhysicalDeviceProperties base{};
  vkGetPhysicalDeviceProperties(pd, &base);
  const bool v13 = base.apiVersion >= VK_API_VERSION_1_3;

  VkPhysicalDeviceProperties2 props{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
  VkPhysicalDeviceSubgroupProperties subgroup{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
  VkPhysicalDeviceMaintenance3Properties m3{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES};
  VkPhysicalDeviceMaintenance4Properties m4{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_4_PROPERTIES};
  VkPhysicalDeviceDriverProperties driver{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES};
  props.pNext = &subgroup;
  subgroup.pNext = &m3;
  m3.pNext = &driver;
  const bool has_m4 = v13 || has_extension(exts, VK_KHR_MAINTENANCE_4_EXTENSION_NAME);
  if (has_m4) driver.pNext = &m4;
  vkGetPhysicalDeviceProperties2(pd, &props);

  VkPhysicalDeviceFeatures2 features{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  VkPhysicalDeviceVulkan11Features f11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
  VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  VkPhysicalDeviceShaderIntegerDotProductFeatures dot{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_INTEGER_DOT_PRODUCT_FEATURES};
  features.pNext = &f11;
  f11.pNext = &f12;
  const bool has_dot = v13 || has_extension(exts, VK_KHR_SHADER_INTEGER_DOT_PRODUCT_EXTENSION_NAME);
  if (has_dot) f12.pNext = &dot;
  vkGetPhysicalDeviceFeatures2(pd, &features);

  VulkanDeviceInfo info;
  info.index = index;
  info.name = base.deviceName;
  info.type = type_name(base.deviceType);
  info.driver = std::string(driver.driverName) + (driver.driverInfo[0] ? std::string(" ") + driver.driverInfo : "");
  info.api_version = std::to_string(VK_API_VERSION_MAJOR(base.apiVersion)) + "." +
                     std::to_string(VK_API_VERSION_MINOR(base.apiVersion)) + "." +
                     std::to_string(VK_API_VERSION_PATCH(base.apiVersion));
  info.vendor_id = base.vendorID;
  info.device_id = base.deviceID;
  *has_budget = has_extension(exts, VK_EXT_MEMORY_BUDGET_EXTENSION_NAME);
  info.heaps = query_heaps(pd, *has_budget);
  info.subgroup_size = subgroup.subgroupSize;
  info.fp16 = f12.shaderFloat16;
  info.int8 = f12.shaderInt8;
  info.storage_16bit = f11.storageBuffer16BitAccess;
  info.storage_8bit = f12.storageBuffer8BitAccess;
  info.integer_dot_product = has_dot && dot.shaderIntegerDotProduct;
  info.cooperative_matrix = has_extension(exts, "VK_KHR_cooperative_matrix");
  info.max_storage_buffer_range = base.limits.maxStorageBufferRange;
  info.max_memory_allocation_size = m3.maxMemoryAllocationSize;
  info.max_buffer_size = has_m4 ? m4.maxBufferSize : 0;
  info.max_workgroup_invocations = base.limits.maxComputeWorkGroupInvocations;
  info.max_shared_memory_bytes = base.limits.maxComputeSharedMemorySize;
  info.min_storage_buffer_offset_alignment = static_cast<uint32_t>(base.limits.minStorageBufferOffsetAlignment);
  return info;
}

}  // namespace

const char* vk_result_name(VkResult r) {
  switch (r) {
    case VK_SUCCESS: return "VK_SUCCESS";
    case VK_NOT_READY: return "VK_NOT_READY";
    case VK_TIMEOUT: return "VK_TIMEOUT";
    case VK_ERROR_OUT_OF_HOST_MEMORY: return "VK_ERROR_OUT_OF_HOST_MEMORY";
    case VK_ERROR_OUT_OF_DEVICE_MEMORY: return "VK_ERROR_OUT_OF_DEVICE_MEMORY";
    case VK_ERROR_INITIALIZATION_FAILED: return "VK_ERROR_INITIALIZATION_FAILED";
    case VK_ERROR_DEVICE_LOST: return "VK_ERROR_DEVICE_LOST";
    case VK_ERROR_MEMORY_MAP_FAILED: return "VK_ERROR_MEMORY_MAP_FAILED";
    case VK_ERROR_LAYER_NOT_PRESENT: return "VK_ERROR_LAYER_NOT_PRESENT";
    case VK_ERROR_EXTENSION_NOT_PRESENT: return "VK_ERROR_EXTENSION_NOT_PRESENT";
    case VK_ERROR_FEATURE_NOT_PRESENT: return "VK_ERROR_FEATURE_NOT_PRESENT";
    case VK_ERROR_INCOMPATIBLE_DRIVER: return "VK_ERROR_INCOMPATIBLE_DRIVER";
    case VK_ERROR_TOO_MANY_OBJECTS: return "VK_ERROR_TOO_MANY_OBJECTS";
    case VK_ERROR_OUT_OF_POOL_MEMORY: return "VK_ERROR_OUT_OF_POOL_MEMORY";
    case VK_ERROR_FRAGMENTED_POOL: return "VK_ERROR_FRAGMENTED_POOL";
    default: return "VkResult (other)";
  }
}

void vk_check(VkResult r, const char* what) {
  if (r == VK_SUCCESS) return;
  throw DeviceLost(std::string("vulkan: ") + what + " failed with " + vk_result_name(r) +
                   (r == VK_ERROR_DEVICE_LOST ? " (the device was lost: driver reset or crash)" : ""));
}

bool validation_requested() {
  const char* v = std::getenv("KAIRO_VULKAN_VALIDATION");
  return v != nullptr && v[0] != '\0' && std::strcmp(v, "0") != 0;
}

Context::~Context() {
  if (device != VK_NULL_HANDLE) {
    vkDeviceWaitIdle(device);
    if (pipeline_cache != VK_NULL_HANDLE) vkDestroyPipelineCache(device, pipeline_cache, nullptr);
    if (command_pool != VK_NULL_HANDLE) vkDestroyCommandPool(device, command_pool, nullptr);
    vkDestroyDevice(device, nullptr);
  }
  Instance in{instance, messenger};
  destroy_instance(in);
}

uint64_t Context::max_allocation() const {
  return std::min(info.max_memory_allocation_size, info.max_storage_buffer_range) / 16 * 16;
}

std::vector<MemoryHeapInfo> Context::heaps() const { return query_heaps(physical, has_memory_budget); }

Result<std::vector<VulkanDeviceInfo>> list_devices() {
  KAIRO_TRY_ASSIGN(Instance in, create_instance());
  auto pds = physical_devices(in.instance);
  if (!pds.ok()) {
    destroy_instance(in);
    return pds.error();
  }
  std::vector<VulkanDeviceInfo> infos;
  for (size_t i = 0; i < pds->size(); ++i) {
    bool budget = false;
    infos.push_back(probe((*pds)[i], static_cast<int>(i), &budget));
  }
  destroy_instance(in);
  return infos;
}

Result<std::unique_ptr<Context>> open_context(int index) {
  auto ctx = std::make_unique<Context>();
  KAIRO_TRY_ASSIGN(Instance in, create_instance());
  ctx->instance = in.instance;
  ctx->messenger = in.messenger;
  KAIRO_TRY_ASSIGN(std::vector<VkPhysicalDevice> pds, physical_devices(ctx->instance));
  if (index < 0 || index >= static_cast<int>(pds.size())) {
    return Error{"vulkan: no device " + std::to_string(index) + " (found " + std::to_string(pds.size()) +
                 "; `kairo devices` lists them)"};
  }
  ctx->physical = pds[static_cast<size_t>(index)];
  ctx->info = probe(ctx->physical, index, &ctx->has_memory_budget);
  VkPhysicalDeviceProperties props{};
  vkGetPhysicalDeviceProperties(ctx->physical, &props);
  if (props.apiVersion < VK_API_VERSION_1_2) {
    return Error{"vulkan: device " + std::to_string(index) + " (" + ctx->info.name + ") supports Vulkan " +
                 ctx->info.api_version + "; kairo needs 1.2: update its driver"};
  }
  ctx->limits = props.limits;
  vkGetPhysicalDeviceMemoryProperties(ctx->physical, &ctx->memory);

  uint32_t n_families = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(ctx->physical, &n_families, nullptr);
  std::vector<VkQueueFamilyProperties> families(n_families);
  vkGetPhysicalDeviceQueueFamilyProperties(ctx->physical, &n_families, families.data());
  int family = -1;
  for (uint32_t i = 0; i < n_families && family < 0; ++i) {
    if (families[i].queueFlags & VK_QUEUE_COMPUTE_BIT) family = static_cast<int>(i);
  }
  if (family < 0) return Error{"vulkan: device " + ctx->info.name + " has no compute queue"};
  ctx->queue_family = static_cast<uint32_t>(family);
  ctx->timestamps = families[ctx->queue_family].timestampValidBits > 0;
  ctx->timestamp_period_ns = props.limits.timestampPeriod;

  const float priority = 1.0f;
  VkDeviceQueueCreateInfo qci{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  qci.queueFamilyIndex = ctx->queue_family;
  qci.queueCount = 1;
  qci.pQueuePriorities = &priority;
  std::vector<const char*> extensions;
  if (ctx->has_memory_budget) extensions.push_back(VK_EXT_MEMORY_BUDGET_EXTENSION_NAME);
  // Byte and half-word loads from storage buffers, where the device has them (Vulkan 1.2 core features).
  const char* portable = std::getenv("KAIRO_VULKAN_PORTABLE_SHADERS");
  ctx->byte_storage = ctx->info.storage_8bit && ctx->info.storage_16bit &&
                      !(portable != nullptr && std::string(portable) == "1");
  VkPhysicalDeviceVulkan11Features enable11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
  VkPhysicalDeviceVulkan12Features enable12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  enable11.pNext = &enable12;
  enable11.storageBuffer16BitAccess = VK_TRUE;
  enable12.storageBuffer8BitAccess = VK_TRUE;
  VkDeviceCreateInfo dci{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  if (ctx->byte_storage) dci.pNext = &enable11;
  dci.queueCreateInfoCount = 1;
  dci.pQueueCreateInfos = &qci;
  dci.enabledExtensionCount = static_cast<uint32_t>(extensions.size());
  dci.ppEnabledExtensionNames = extensions.data();
  VkResult r = vkCreateDevice(ctx->physical, &dci, nullptr, &ctx->device);
  if (r != VK_SUCCESS) {
    return Error{"vulkan: vkCreateDevice on " + ctx->info.name + " failed: " + vk_result_name(r)};
  }
  vkGetDeviceQueue(ctx->device, ctx->queue_family, 0, &ctx->queue);

  VkCommandPoolCreateInfo pci{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  pci.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  pci.queueFamilyIndex = ctx->queue_family;
  r = vkCreateCommandPool(ctx->device, &pci, nullptr, &ctx->command_pool);
  if (r != VK_SUCCESS) return Error{std::string("vulkan: vkCreateCommandPool failed: ") + vk_result_name(r)};
  VkPipelineCacheCreateInfo cci{VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
  r = vkCreatePipelineCache(ctx->device, &cci, nullptr, &ctx->pipeline_cache);
  if (r != VK_SUCCESS) return Error{std::string("vulkan: vkCreatePipelineCache failed: ") + vk_result_name(r)};
  return ctx;
}

}  // namespace kairo::kernels::vulkan
