// Every float op of the NEON backend in one file: elementwise ops, RoPE and KV writes, attention and the float-weight
// matmul (the code is in elementwise.inc, attention.inc and matmul_float.inc, shared by the ISAs; x86 compiles them
// per file, aarch64 has less of them to build).
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
#include "kernels/cpu/elementwise.inc"
#include "kernels/cpu/attention.inc"
#include "kernels/cpu/matmul_float.inc"
}  // namespace kairo::kernels::neon
