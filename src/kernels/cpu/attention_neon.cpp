// Attention for aarch64 NEON (the code is in attention.inc, shared by the ISAs).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
// GCC 12 for aarch64 warns that the scalar tails of the kW-wide loops overflow for n near INT64_MAX: unreachable.
#pragma GCC diagnostic ignored "-Waggressive-loop-optimizations"
#endif
#include <arm_neon.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <functional>

#include "core/half.h"
#include "kernels/cpu/isa_kernels.h"
#include "kernels/cpu/scratch.h"
#include "tensor/dequant.h"
#include "tensor/quantize.h"

namespace kairo::kernels::neon {
using cpu::align_up;
using cpu::ScratchSlot;
using cpu::thread_scratch;
#include "kernels/cpu/simd.inc"
#include "kernels/cpu/row_helpers.inc"
#include "kernels/cpu/attention.inc"
}  // namespace kairo::kernels::neon
