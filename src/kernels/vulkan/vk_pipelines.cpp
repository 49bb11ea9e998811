#include "kernels/vulkan/vk_pipelines.h"

#include <cassert>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "kernels/vulkan/spirv_registry.h"

namespace kairo::kernels::vulkan {

Pipelines::~Pipelines() {
  for (auto& [name, p] : pipelines_) {
    vkDestroyPipeline(ctx_.device, p.pipeline, nullptr);
    vkDestroyPipelineLayout(ctx_.device, p.layout, nullptr);
    vkDestroyDescriptorSetLayout(ctx_.device, p.set_layout, nullptr);
  }
}

const Pipeline& Pipelines::get(std::string_view name, uint32_t n_bindings) {
  auto it = pipelines_.find(name);
  if (it != pipelines_.end()) {
    assert(it->second.n_bindings == n_bindings);
    return it->second;
  }
  const std::span<const uint32_t> code = spirv(name);
  if (code.empty()) {
    std::fprintf(stderr, "vulkan: no shader variant '%.*s' was built\n", static_cast<int>(name.size()), name.data());
    std::abort();
  }
  assert(n_bindings <= kMaxBindings);
  Pipeline p;
  p.n_bindings = n_bindings;
  VkDescriptorSetLayoutBinding bindings[kMaxBindings]{};
  for (uint32_t i = 0; i < n_bindings; ++i) {
    bindings[i].binding = i;
    bindings[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    bindings[i].descriptorCount = 1;
    bindings[i].stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
  }
  VkDescriptorSetLayoutCreateInfo sci{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
  sci.bindingCount = n_bindings;
  sci.pBindings = bindings;
  vk_check(vkCreateDescriptorSetLayout(ctx_.device, &sci, nullptr, &p.set_layout), "vkCreateDescriptorSetLayout");

  VkPushConstantRange push{VK_SHADER_STAGE_COMPUTE_BIT, 0, kPushBytes};
  VkPipelineLayoutCreateInfo lci{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  lci.setLayoutCount = 1;
  lci.pSetLayouts = &p.set_layout;
  lci.pushConstantRangeCount = 1;
  lci.pPushConstantRanges = &push;
  vk_check(vkCreatePipelineLayout(ctx_.device, &lci, nullptr, &p.layout), "vkCreatePipelineLayout");

  VkShaderModuleCreateInfo mci{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
  mci.codeSize = code.size() * sizeof(uint32_t);
  mci.pCode = code.data();
  VkShaderModule module = VK_NULL_HANDLE;
  vk_check(vkCreateShaderModule(ctx_.device, &mci, nullptr, &module), "vkCreateShaderModule");

  VkComputePipelineCreateInfo pci{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
  pci.stage = VkPipelineShaderStageCreateInfo{VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
  pci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  pci.stage.module = module;
  pci.stage.pName = "main";
  pci.layout = p.layout;
  const VkResult r = vkCreateComputePipelines(ctx_.device, ctx_.pipeline_cache, 1, &pci, nullptr, &p.pipeline);
  vkDestroyShaderModule(ctx_.device, module, nullptr);
  vk_check(r, (std::string("vkCreateComputePipelines (") + std::string(name) + ")").c_str());
  return pipelines_.emplace(std::string(name), p).first->second;
}

}  // namespace kairo::kernels::vulkan
