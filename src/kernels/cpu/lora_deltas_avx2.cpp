// The fused LoRA deltas for AVX2 (the code is in lora_deltas.inc, shared by the ISAs).
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <functional>

#include "core/half.h"
#include "kernels/cpu/isa_kernels.h"

namespace kairo::kernels::avx2 {
#include "kernels/cpu/simd.inc"
#include "kernels/cpu/lora_deltas.inc"
}  // namespace kairo::kernels::avx2
