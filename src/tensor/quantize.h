#pragma once
// Scalar reference quantization (float -> block types), matching llama.cpp's reference quantizers
// (quantize_row_*_ref, i.e. what llama-quantize does without an importance matrix) so files written by kairo load
// in other engines and round-trip through dequantize_row with the expected error. For finite inputs the bytes are
// identical to llama.cpp's; NaN/inf inputs give unspecified (but defined, non-crashing) blocks.
#include <cstdint>

#include "tensor/blocks.h"
#include "tensor/dtype.h"

namespace kairo {

// True if quantize_row can produce `type`: F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, MXFP4, Q4_K, Q5_K, Q6_K.
bool can_quantize_to(DType type);

// Quantizes n floats (a multiple of the block size) into dst, which holds row_bytes(type, n) bytes.
// Precondition: can_quantize_to(type). `dst` needs no particular alignment.
void quantize_row(DType type, const float* src, void* dst, int64_t n);

// Per-type forms: n_blocks blocks from n_blocks * block size floats.
void quantize_blocks(const float* src, BlockQ4_0* dst, int64_t n_blocks);
void quantize_blocks(const float* src, BlockQ4_1* dst, int64_t n_blocks);
void quantize_blocks(const float* src, BlockQ5_0* dst, int64_t n_blocks);
void quantize_blocks(const float* src, BlockQ5_1* dst, int64_t n_blocks);
void quantize_blocks(const float* src, BlockQ8_0* dst, int64_t n_blocks);
void quantize_blocks(const float* src, BlockMXFP4* dst, int64_t n_blocks);
void quantize_blocks(const float* src, BlockQ4_K* dst, int64_t n_blocks);
void quantize_blocks(const float* src, BlockQ5_K* dst, int64_t n_blocks);
void quantize_blocks(const float* src, BlockQ6_K* dst, int64_t n_blocks);

}  // namespace kairo
