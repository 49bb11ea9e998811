#pragma once
// Opening the device a model runs on, and listing every device this binary can use.
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "core/result.h"
#include "kernels/device.h"

namespace kairo::devices {

// The device named by --device (see device_spec.h). The error says what was found and what to pick instead.
Result<std::shared_ptr<kernels::Device>> open_device(const std::string& spec);

// Every device: the CPU, then each Vulkan device with its limits and features, then CUDA. A backend that cannot be
// used here (no loader, no driver, not built in) appears with an "error" field instead of devices.
nlohmann::json list_devices_json();
// The same as lines for a terminal.
std::string format_devices(const nlohmann::json& listing);

}  // namespace kairo::devices

namespace kairo::devices {

// Read bandwidth of a non-CPU device's memory in GB/s, measured by a streaming shader over `bytes` (warm-up, then
// the median of several runs). The CPU's is bench::measure_roofline's.
Result<double> measure_device_read_bandwidth(kernels::Device& device, uint64_t bytes);

}  // namespace kairo::devices
