#pragma once
// The device layout of a weight matrix. GGUF blocks are 18 (Q4_0), 34 (Q8_0) or 210 (Q6_K) bytes, so a row of them
// can't be read with aligned 16-byte loads. At upload each matrix is repacked so that every "chunk" (the 16 bytes
// of quants one thread decodes at a time) is 16-byte aligned, with the f16 block scales moved to their own region:
//
//   [quant region: n_rows x qs_row_bytes][pad to 256][scale region: n_rows x scale_row_elems f16]
//
//   F32/F16/BF16  quant row = the values, zero-padded to 16 bytes; no scales
//   Q8_0          quant row = the 32 int8 of each block back to back (a chunk is half a block); scale = block d
//   Q4_0          quant row = the 16 nibble bytes of each block (a chunk is one block); scale = block d
//   Q4_K          unchanged: 144-byte super-blocks are already 16-byte multiples (header chunk + 8 quant chunks)
//   Q5_K          unchanged: 176-byte super-blocks (header chunk + 2 high-bit chunks + 8 quant chunks)
//   Q6_K          208-byte super-blocks [ql 128][qh 64][scales 16]; scale = super-block d
//
// A device MatrixView (see cuda_backend.h) points at the start of this buffer and has row_bytes == qs_row_bytes;
// everything else follows from dtype and shape through packed_layout().
#include <cstdint>

#include "core/result.h"
#include "tensor/dtype.h"

namespace kairo::kernels::cuda {

struct PackedLayout {
  DType dtype = DType::F32;
  int64_t n_rows = 0;
  int64_t n_cols = 0;
  int chunk_cols = 0;           // matrix columns one 16-byte chunk holds
  int64_t n_chunks = 0;         // chunks per row (ceil for float types, whose last chunk may be padding)
  int64_t qs_row_bytes = 0;     // bytes per row in the quant region, a multiple of 16
  int64_t scales_offset = 0;    // byte offset of the scale region (256-aligned); 0 when the type has none
  int64_t scale_row_elems = 0;  // f16 scales per row
  int64_t total_bytes = 0;      // whole buffer, a multiple of 256
};

// Types the CUDA kernels compute with.
bool cuda_supports(DType t);

// The layout for a matrix, or an error naming the type or shape the CUDA backend can't take.
Result<PackedLayout> packed_layout(DType t, int64_t n_rows, int64_t n_cols);

// Rows [row_begin, row_end) of a matrix in GGUF layout (rows `src_row_bytes` apart, starting at row 0 = `src`)
// written in the packed layout: quants to `qs_out` (rows back to back, qs_row_bytes each) and scales to
// `scales_out` (scale_row_elems each; may be null when the type has none). Used to stage uploads in slices.
void pack_rows(const PackedLayout& layout, const uint8_t* src, size_t src_row_bytes, int64_t row_begin,
               int64_t row_end, uint8_t* qs_out, uint16_t* scales_out);

// Whole matrix into one buffer of layout.total_bytes (host memory), padding zeroed. For tests and small tensors.
void pack_matrix(const PackedLayout& layout, const uint8_t* src, size_t src_row_bytes, uint8_t* dst);

inline constexpr int64_t align_up(int64_t x, int64_t a) { return (x + a - 1) / a * a; }

}  // namespace kairo::kernels::cuda
