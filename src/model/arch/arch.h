#pragma once
// What distinguishes one decoder architecture from another in the generic forward pass. Each supported
// architecture is one file in this folder that fills in an ArchSpec; adding one needs no change to the forward.
#include <string>
#include <vector>

#include "kernels/backend.h"

namespace kairo::model {

struct ArchSpec {
  std::string name;                 // general.architecture value
  kernels::RopeStyle rope_style;
  bool qkv_bias;                    // Q/K/V projections carry biases
  float default_rope_base;
  bool qk_norm = false;             // per-head RMS norm of Q and K before rope (attn_q_norm / attn_k_norm)
};

// nullptr when the architecture is not supported.
const ArchSpec* find_arch(const std::string& name);
std::vector<std::string> supported_arch_names();

}  // namespace kairo::model
