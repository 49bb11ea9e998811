#pragma once
// The SPIR-V of every shader variant, embedded at build time (see CMakeLists.txt: one glslc run per variant).
#include <cstdint>
#include <span>
#include <string_view>

namespace kairo::kernels::vulkan {

// The words of variant `name` ("matmul_q4_k_t8", "rms_norm", ...); empty when no such variant was built.
std::span<const uint32_t> spirv(std::string_view name);

}  // namespace kairo::kernels::vulkan
