// The fused LoRA deltas for NEON (the code is in lora_deltas.inc, shared by the ISAs).
#if defined(__GNUC__) && !defined(__clang__)
// GCC 12 for aarch64 warns that the scalar tails of the kW-wide loops overflow for n near INT64_MAX: unreachable.
#pragma GCC diagnostic ignored "-Waggressive-loop-optimizations"
#endif
#include <arm_neon.h>

#include <algorithm>
#include <cmath>
#include <functional>

#include "core/half.h"
#include "kernels/cpu/isa_kernels.h"

namespace kairo::kernels::neon {
#include "kernels/cpu/simd.inc"
#include "kernels/cpu/lora_deltas.inc"
}  // namespace kairo::kernels::neon
