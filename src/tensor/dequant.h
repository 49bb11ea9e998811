#pragma once
// Scalar reference dequantization: the oracle every optimized kernel is tested against. Plain C++, no intrinsics,
// written for clarity and exactness rather than speed. Results are bit-identical to ggml's dequantize_row_* (same
// float operations in the same order; the build does not contract a*b+c into FMA).
#include <cstdint>
#include <span>

#include "tensor/blocks.h"
#include "tensor/dtype.h"

namespace kairo {

// Dequantizes n elements (a multiple of the type's block size) from `src` into `dst`.
// Precondition: dtype_info(type).supported and n % block_size == 0. `src` needs no particular alignment.
void dequantize_row(DType type, const void* src, float* dst, int64_t n);

// Per-type forms, for callers that already know the type (n_blocks blocks -> n_blocks * block size floats).
void dequantize_blocks(const BlockQ4_0* src, float* dst, int64_t n_blocks);
void dequantize_blocks(const BlockQ4_1* src, float* dst, int64_t n_blocks);
void dequantize_blocks(const BlockQ5_0* src, float* dst, int64_t n_blocks);
void dequantize_blocks(const BlockQ5_1* src, float* dst, int64_t n_blocks);
void dequantize_blocks(const BlockQ8_0* src, float* dst, int64_t n_blocks);
void dequantize_blocks(const BlockMXFP4* src, float* dst, int64_t n_blocks);
void dequantize_blocks(const BlockQ4_K* src, float* dst, int64_t n_blocks);
void dequantize_blocks(const BlockQ5_K* src, float* dst, int64_t n_blocks);
void dequantize_blocks(const BlockQ6_K* src, float* dst, int64_t n_blocks);

}  // namespace kairo
