#include <array>

#include "model/arch/arch.h"

namespace kairo::model {

// Each architecture file defines one of these; list it here to make it loadable.
const ArchSpec& llama_arch();
const ArchSpec& qwen2_arch();
const ArchSpec& qwen3_arch();

namespace {
std::array<const ArchSpec*, 3> all_archs() { return {&llama_arch(), &qwen2_arch(), &qwen3_arch()}; }
}  // namespace

const ArchSpec* find_arch(const std::string& name) {
  for (const ArchSpec* spec : all_archs()) {
    if (spec->name == name) return spec;
  }
  return nullptr;
}

std::vector<std::string> supported_arch_names() {
  std::vector<std::string> names;
  for (const ArchSpec* spec : all_archs()) names.push_back(spec->name);
  return names;
}

}  // namespace kairo::model
