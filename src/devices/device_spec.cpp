#include "devices/device_spec.h"

#include <charconv>

namespace kairo::devices {
namespace {

const char* kind_name(kernels::DeviceKind kind) {
  switch (kind) {
    case kernels::DeviceKind::Cpu: return "cpu";
    case kernels::DeviceKind::Vulkan: return "vulkan";
    case kernels::DeviceKind::Cuda: return "cuda";
  }
  return "?";
}

}  // namespace

Result<DeviceSpec> parse_device_spec(const std::string& text) {
  const size_t colon = text.find(':');
  const std::string kind = text.substr(0, colon);
  DeviceSpec spec;
  if (kind == "cpu") {
    spec.kind = kernels::DeviceKind::Cpu;
  } else if (kind == "vulkan") {
    spec.kind = kernels::DeviceKind::Vulkan;
  } else if (kind == "cuda") {
    spec.kind = kernels::DeviceKind::Cuda;
  } else {
    return Error{"--device '" + text + "' is not a device: use cpu, vulkan[:N] or cuda[:N] (`kairo devices` lists them)"};
  }
  if (colon != std::string::npos) {
    const std::string index = text.substr(colon + 1);
    const char* end = index.data() + index.size();
    auto [p, ec] = std::from_chars(index.data(), end, spec.index);
    if (index.empty() || ec != std::errc() || p != end || spec.index < 0 || spec.kind == kernels::DeviceKind::Cpu) {
      return Error{"--device '" + text + "': the index after ':' must be a device number from `kairo devices` " +
                   "(vulkan:0, cuda:1; the CPU takes none)"};
    }
  }
  return spec;
}

std::string to_string(const DeviceSpec& spec) {
  std::string s = kind_name(spec.kind);
  if (spec.kind != kernels::DeviceKind::Cpu) s += ":" + std::to_string(spec.index);
  return s;
}

}  // namespace kairo::devices
