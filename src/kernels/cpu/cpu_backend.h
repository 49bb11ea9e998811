#pragma once
// The CPU backends, one per ISA level. best_cpu_backend() (kernels/backend.h) picks the best one this CPU runs;
// tests and benchmarks ask for each level explicitly to check every path against the reference.
#include "kernels/backend.h"
#include "kernels/cpu/cpu_features.h"

namespace kairo::kernels::cpu {

// The backend of `isa`, or nullptr when this CPU can't run it. Isa::Scalar is the reference backend.
const Backend* cpu_backend(Isa isa);

}  // namespace kairo::kernels::cpu
