#pragma once
// The --device flag's value: cpu, vulkan[:N] or cuda[:N] (N the index `kairo devices` lists, 0 by default).
#include <string>

#include "core/result.h"
#include "kernels/device.h"

namespace kairo::devices {

struct DeviceSpec {
  kernels::DeviceKind kind = kernels::DeviceKind::Cpu;
  int index = 0;
};

Result<DeviceSpec> parse_device_spec(const std::string& text);
std::string to_string(const DeviceSpec& spec);

}  // namespace kairo::devices
