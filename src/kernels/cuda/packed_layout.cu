#include "kernels/cuda/packed_layout.h"

#include <cstring>

#include "core/format.h"
#include "tensor/blocks.h"

namespace kairo::kernels::cuda {

bool cuda_supports(DType t) {
  switch (t) {
    case DType::F32: case DType::F16: case DType::BF16:
    case DType::Q8_0: case DType::Q4_0: case DType::Q4_K: case DType::Q5_K: case DType::Q6_K:
      return true;
    default:
      return false;
  }
}

Result<PackedLayout> packed_layout(DType t, int64_t n_rows, int64_t n_cols) {
  if (!cuda_supports(t)) {
    return Error{strprintf("weight type %s is not supported by the CUDA backend (supported: F32, F16, BF16, Q8_0, "
                           "Q4_0, Q4_K, Q5_K, Q6_K); requantize the model, e.g. to Q8_0 or Q4_K_M",
                           std::string(dtype_name(t)).c_str())};
  }
  const int64_t block = dtype_info(t).block_size;
  if (n_rows <= 0 || n_cols <= 0 || n_cols % block != 0) {
    return Error{strprintf("matrix of %lld x %lld %s: the column count must be a positive multiple of %lld",
                           static_cast<long long>(n_rows), static_cast<long long>(n_cols),
                           std::string(dtype_name(t)).c_str(), static_cast<long long>(block))};
  }
  PackedLayout l;
  l.dtype = t;
  l.n_rows = n_rows;
  l.n_cols = n_cols;
  switch (t) {
    case DType::F32: l.chunk_cols = 4; break;
    case DType::F16: case DType::BF16: l.chunk_cols = 8; break;
    case DType::Q8_0: l.chunk_cols = 16; break;
    default: l.chunk_cols = 32; break;  // Q4_0, Q4_K, Q5_K, Q6_K
  }
  l.n_chunks = (n_cols + l.chunk_cols - 1) / l.chunk_cols;
  switch (t) {
    case DType::Q4_K: l.qs_row_bytes = n_cols / kQK_K * static_cast<int64_t>(sizeof(BlockQ4_K)); break;
    case DType::Q5_K: l.qs_row_bytes = n_cols / kQK_K * static_cast<int64_t>(sizeof(BlockQ5_K)); break;
    case DType::Q6_K: l.qs_row_bytes = n_cols / kQK_K * 208; break;
    default: l.qs_row_bytes = l.n_chunks * 16; break;
  }
  if (t == DType::Q8_0 || t == DType::Q4_0) l.scale_row_elems = n_cols / kQK;
  if (t == DType::Q6_K) l.scale_row_elems = n_cols / kQK_K;
  const int64_t qs_bytes = align_up(n_rows * l.qs_row_bytes, 256);
  l.scales_offset = l.scale_row_elems > 0 ? qs_bytes : 0;
  l.total_bytes = qs_bytes + align_up(n_rows * l.scale_row_elems * 2, 256);
  return l;
}

void pack_rows(const PackedLayout& l, const uint8_t* src, size_t src_row_bytes, int64_t row_begin, int64_t row_end,
               uint8_t* qs_out, uint16_t* scales_out) {
  for (int64_t r = row_begin; r < row_end; ++r) {
    const uint8_t* s = src + r * src_row_bytes;
    uint8_t* q = qs_out + (r - row_begin) * l.qs_row_bytes;
    uint16_t* sc = scales_out == nullptr ? nullptr : scales_out + (r - row_begin) * l.scale_row_elems;
    switch (l.dtype) {
      case DType::Q8_0:
        for (int64_t b = 0; b < l.n_cols / kQK; ++b) {
          BlockQ8_0 blk;
          std::memcpy(&blk, s + b * sizeof(BlockQ8_0), sizeof blk);
          std::memcpy(q + b * kQK, blk.qs, kQK);
          sc[b] = blk.d;
        }
        break;
      case DType::Q4_0:
        for (int64_t b = 0; b < l.n_cols / kQK; ++b) {
          BlockQ4_0 blk;
          std::memcpy(&blk, s + b * sizeof(BlockQ4_0), sizeof blk);
          std::memcpy(q + b * (kQK / 2), blk.qs, kQK / 2);
          sc[b] = blk.d;
        }
        break;
      case DType::Q4_K:
      case DType::Q5_K:  // super-blocks are already 16-byte multiples
        std::memcpy(q, s, static_cast<size_t>(l.qs_row_bytes));
        break;
      case DType::Q6_K:
        for (int64_t b = 0; b < l.n_cols / kQK_K; ++b) {
          BlockQ6_K blk;
          std::memcpy(&blk, s + b * sizeof(BlockQ6_K), sizeof blk);
          uint8_t* dst = q + b * 208;
          std::memcpy(dst, blk.ql, sizeof blk.ql);
          std::memcpy(dst + 128, blk.qh, sizeof blk.qh);
          std::memcpy(dst + 192, blk.scales, sizeof blk.scales);
          sc[b] = blk.d;
        }
        break;
      default: {  // float types: the values, then zeros up to the 16-byte row
        const size_t bytes = row_bytes(l.dtype, l.n_cols);
        std::memcpy(q, s, bytes);
        std::memset(q + bytes, 0, static_cast<size_t>(l.qs_row_bytes) - bytes);
        break;
      }
    }
  }
}

void pack_matrix(const PackedLayout& l, const uint8_t* src, size_t src_row_bytes, uint8_t* dst) {
  std::memset(dst, 0, static_cast<size_t>(l.total_bytes));
  uint16_t* scales = l.scale_row_elems > 0 ? reinterpret_cast<uint16_t*>(dst + l.scales_offset) : nullptr;
  pack_rows(l, src, src_row_bytes, 0, l.n_rows, dst, scales);
}

}  // namespace kairo::kernels::cuda
