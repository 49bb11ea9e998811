#pragma once
// Scalar reference quantization (float -> block types), matching llama.cpp's reference quantizers so files written
// by kairo load in other engines and round-trip through dequantize_row with the expected error.
#include <cstdint>

#include "tensor/dtype.h"

namespace kairo {

// True if quantize_row can produce `type`.
bool can_quantize_to(DType type);

// Quantizes n floats (a multiple of the block size) into dst, which holds row_bytes(type, n) bytes.
void quantize_row(DType type, const float* src, void* dst, int64_t n);

}  // namespace kairo
