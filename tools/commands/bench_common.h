#pragma once
// Helpers shared by the `kairo bench` kinds that run a model: how to name the model in a table row.
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "core/format.h"
#include "model/model.h"

namespace kairo::tools {

// "Q4_K/Q6_K": the matrix types of the file, most bytes first.
inline std::string matrix_types(const gguf::File& file) {
  std::map<std::string, uint64_t> bytes;
  for (const auto& t : file.tensors()) {
    if (t.dims.size() >= 2) bytes[std::string(dtype_name(t.type))] += t.n_bytes;
  }
  std::vector<std::pair<uint64_t, std::string>> v;
  for (const auto& [name, b] : bytes) v.emplace_back(b, name);
  std::sort(v.rbegin(), v.rend());
  std::string out;
  for (const auto& [b, name] : v) out += (out.empty() ? "" : "/") + name;
  return out;
}

// "llama 1.10B Q4_0/Q6_K"
inline std::string model_label(const model::Model& m) {
  return strprintf("%s %.2fB %s", m.config().arch.c_str(), static_cast<double>(m.weights().n_params) * 1e-9,
                   matrix_types(m.file()).c_str());
}

}  // namespace kairo::tools
