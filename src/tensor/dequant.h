#pragma once
// Scalar reference dequantization: the oracle every optimized kernel is tested against. Plain C++, no intrinsics,
// written for clarity and exactness rather than speed.
#include <cstdint>
#include <span>

#include "tensor/dtype.h"

namespace kairo {

// Dequantizes n elements (a multiple of the type's block size) from `src` into `dst`.
// Precondition: is_supported(type) and n % block_size == 0.
void dequantize_row(DType type, const void* src, float* dst, int64_t n);

}  // namespace kairo
