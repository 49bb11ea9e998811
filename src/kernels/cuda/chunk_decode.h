#pragma once
// Per-type decoders of one 16-byte chunk of a packed weight row (packed_layout.h), shared by the GEMV, the
// dequantize-for-GEMM kernel and get_row, and unit-tested on the host against the reference dequantizer.
//
// A chunk decodes to kCols values in "chunk order" j = 0..kCols-1, split into kRuns runs of kRunLen values that
// share one affine map: weight[j] = a[run] * q[j] + b[run] (b is zero for types without a min). col(c, j) gives the
// matrix column of value j of chunk c; locate() is its inverse. The GEMV keeps activations in chunk order
// (x_chunked[j][c]) so that the 32 lanes of a warp, each on its own chunk c, read consecutive floats.
//
// Expressions mirror tensor/dequant*.cpp (e.g. Q4_K: (d * sc) * q - dmin * m), so on the host a*q+b reproduces the
// reference bit for bit.
#include <cstdint>

#include "kernels/cuda/host_device.h"
#include "tensor/dtype.h"

namespace kairo::kernels::cuda {

template <DType T>
struct ChunkDecoder;

template <>
struct ChunkDecoder<DType::F32> {
  static constexpr int kCols = 4, kRuns = 1, kRunLen = 4;
  static constexpr bool kHasMin = false;
  struct Raw { U128 v; };
  KAIRO_HD static Raw load(const uint8_t* qs_row, const uint16_t*, int64_t c) { return {load_u128_stream(qs_row + 16 * c)}; }
  KAIRO_HD static void decode(const Raw& r, int64_t, float* q, float* a, float* b) {
    KAIRO_UNROLL
    for (int j = 0; j < kCols; ++j) q[j] = bits_to_float(r.v.w[j]);
    a[0] = 1.0f;
    b[0] = 0.0f;
  }
  KAIRO_HD static int64_t col(int64_t c, int j) { return c * kCols + j; }
  KAIRO_HD static void locate(int64_t col, int64_t* c, int* j) { *c = col / kCols; *j = static_cast<int>(col % kCols); }
};

template <DType T>
struct ChunkDecoder16 {  // F16 and BF16: eight 2-byte values
  static constexpr int kCols = 8, kRuns = 1, kRunLen = 8;
  static constexpr bool kHasMin = false;
  struct Raw { U128 v; };
  KAIRO_HD static Raw load(const uint8_t* qs_row, const uint16_t*, int64_t c) { return {load_u128_stream(qs_row + 16 * c)}; }
  KAIRO_HD static void decode(const Raw& r, int64_t, float* q, float* a, float* b) {
    KAIRO_UNROLL
    for (int j = 0; j < kCols; ++j) {
      const uint16_t h = u16_of(r.v, j);
      q[j] = T == DType::F16 ? half_to_float(h) : bf16_to_float(h);
    }
    a[0] = 1.0f;
    b[0] = 0.0f;
  }
  KAIRO_HD static int64_t col(int64_t c, int j) { return c * kCols + j; }
  KAIRO_HD static void locate(int64_t col, int64_t* c, int* j) { *c = col / kCols; *j = static_cast<int>(col % kCols); }
};
template <> struct ChunkDecoder<DType::F16> : ChunkDecoder16<DType::F16> {};
template <> struct ChunkDecoder<DType::BF16> : ChunkDecoder16<DType::BF16> {};

// Q8_0: a chunk is half a block (16 int8), its scale the block's d.
template <>
struct ChunkDecoder<DType::Q8_0> {
  static constexpr int kCols = 16, kRuns = 1, kRunLen = 16;
  static constexpr bool kHasMin = false;
  struct Raw { U128 v; uint16_t d; };
  KAIRO_HD static Raw load(const uint8_t* qs_row, const uint16_t* scale_row, int64_t c) {
    return {load_u128_stream(qs_row + 16 * c), load_u16(scale_row + c / 2)};
  }
  KAIRO_HD static void decode(const Raw& r, int64_t, float* q, float* a, float* b) {
    KAIRO_UNROLL
    for (int j = 0; j < kCols; ++j) q[j] = static_cast<float>(static_cast<int8_t>(byte_of(r.v, j)));
    a[0] = half_to_float(r.d);
    b[0] = 0.0f;
  }
  KAIRO_HD static int64_t col(int64_t c, int j) { return c * kCols + j; }
  KAIRO_HD static void locate(int64_t col, int64_t* c, int* j) { *c = col / kCols; *j = static_cast<int>(col % kCols); }
};

// Q4_0: a chunk is one block: low nibbles are columns 0-15, high nibbles 16-31, so chunk order is column order.
template <>
struct ChunkDecoder<DType::Q4_0> {
  static constexpr int kCols = 32, kRuns = 1, kRunLen = 32;
  static constexpr bool kHasMin = false;
  struct Raw { U128 v; uint16_t d; };
  KAIRO_HD static Raw load(const uint8_t* qs_row, const uint16_t* scale_row, int64_t c) {
    return {load_u128_stream(qs_row + 16 * c), load_u16(scale_row + c)};
  }
  KAIRO_HD static void decode(const Raw& r, int64_t, float* q, float* a, float* b) {
    KAIRO_UNROLL
    for (int j = 0; j < 16; ++j) {
      const int byte = byte_of(r.v, j);
      q[j] = static_cast<float>((byte & 0x0F) - 8);
      q[j + 16] = static_cast<float>((byte >> 4) - 8);
    }
    a[0] = half_to_float(r.d);
    b[0] = 0.0f;
  }
  KAIRO_HD static int64_t col(int64_t c, int j) { return c * kCols + j; }
  KAIRO_HD static void locate(int64_t col, int64_t* c, int* j) { *c = col / kCols; *j = static_cast<int>(col % kCols); }
};

// Sub-block j's 6-bit scale and min from the 12 packed bytes of a Q4_K header (bytes 4..15 of the header chunk).
KAIRO_HD void q4k_scale_min(const U128& head, int j, int* sc, int* m) {
  // head bytes: 0-1 d, 2-3 dmin, 4-15 scales[0..11]
  if (j < 4) {
    *sc = byte_of(head, 4 + j) & 63;
    *m = byte_of(head, 8 + j) & 63;
  } else {
    *sc = (byte_of(head, 8 + j) & 0x0F) | ((byte_of(head, 4 + j - 4) >> 6) << 4);
    *m = (byte_of(head, 8 + j) >> 4) | ((byte_of(head, 4 + j) >> 6) << 4);
  }
}

// Q4_K: super-block = header chunk (d, dmin, scales) + 8 quant chunks. Quant chunk i (0..7) is bytes 16i..16i+15 of
// qs: pair k = i/2, offset l0 = 16*(i%2) into its 32 bytes; low nibbles are sub-block 2k, high nibbles 2k+1.
template <>
struct ChunkDecoder<DType::Q4_K> {
  static constexpr int kCols = 32, kRuns = 2, kRunLen = 16;
  static constexpr bool kHasMin = true;
  struct Raw { U128 head; U128 v; };
  KAIRO_HD static Raw load(const uint8_t* qs_row, const uint16_t*, int64_t c) {
    const uint8_t* sb = qs_row + (c >> 3) * 144;
    return {load_u128(sb), load_u128_stream(sb + 16 + 16 * (c & 7))};
  }
  KAIRO_HD static void decode(const Raw& r, int64_t c, float* q, float* a, float* b) {
    const int k = static_cast<int>(c & 7) >> 1;
    const float d = half_to_float(u16_of(r.head, 0));
    const float dmin = half_to_float(u16_of(r.head, 1));
    KAIRO_UNROLL
    for (int j = 0; j < 16; ++j) {
      const int byte = byte_of(r.v, j);
      q[j] = static_cast<float>(byte & 0x0F);
      q[j + 16] = static_cast<float>(byte >> 4);
    }
    KAIRO_UNROLL
    for (int run = 0; run < 2; ++run) {
      int sc, m;
      q4k_scale_min(r.head, 2 * k + run, &sc, &m);
      a[run] = d * static_cast<float>(sc);
      b[run] = -(dmin * static_cast<float>(m));
    }
  }
  KAIRO_HD static int64_t col(int64_t c, int j) {
    const int i = static_cast<int>(c & 7);
    return (c >> 3) * 256 + 64 * (i >> 1) + 32 * (j >> 4) + 16 * (i & 1) + (j & 15);
  }
  KAIRO_HD static void locate(int64_t col, int64_t* c, int* j) {
    const int o = static_cast<int>(col & 255);
    const int k = o >> 6, hi = (o >> 5) & 1, l = o & 31;
    *c = (col >> 8) * 8 + 2 * k + (l >> 4);
    *j = (l & 15) + 16 * hi;
  }
};

// Q5_K: super-block = header chunk (d, dmin, scales; as Q4_K) + 2 qh chunks + 8 quant chunks (176 bytes, unchanged
// from GGUF). Quant chunk i (0..7) is bytes 16i..16i+15 of qs, laid out as Q4_K's; its fifth bits are bytes
// 16*(i%2).. of qh, bit 2k for the low nibbles (sub-block 2k) and bit 2k+1 for the high ones (k = i/2).
template <>
struct ChunkDecoder<DType::Q5_K> {
  static constexpr int kCols = 32, kRuns = 2, kRunLen = 16;
  static constexpr bool kHasMin = true;
  struct Raw { U128 head; U128 qh; U128 v; };
  KAIRO_HD static Raw load(const uint8_t* qs_row, const uint16_t*, int64_t c) {
    const uint8_t* sb = qs_row + (c >> 3) * 176;
    const int i = static_cast<int>(c & 7);
    return {load_u128(sb), load_u128_stream(sb + 16 + 16 * (i & 1)), load_u128_stream(sb + 48 + 16 * i)};
  }
  KAIRO_HD static void decode(const Raw& r, int64_t c, float* q, float* a, float* b) {
    const int k = static_cast<int>(c & 7) >> 1;
    const float d = half_to_float(u16_of(r.head, 0));
    const float dmin = half_to_float(u16_of(r.head, 1));
    KAIRO_UNROLL
    for (int j = 0; j < 16; ++j) {
      const int byte = byte_of(r.v, j);
      const int hb = byte_of(r.qh, j);
      q[j] = static_cast<float>((byte & 0x0F) | (((hb >> (2 * k)) & 1) << 4));
      q[j + 16] = static_cast<float>((byte >> 4) | (((hb >> (2 * k + 1)) & 1) << 4));
    }
    KAIRO_UNROLL
    for (int run = 0; run < 2; ++run) {
      int sc, m;
      q4k_scale_min(r.head, 2 * k + run, &sc, &m);
      a[run] = d * static_cast<float>(sc);
      b[run] = -(dmin * static_cast<float>(m));
    }
  }
  KAIRO_HD static int64_t col(int64_t c, int j) { return ChunkDecoder<DType::Q4_K>::col(c, j); }
  KAIRO_HD static void locate(int64_t col, int64_t* c, int* j) { ChunkDecoder<DType::Q4_K>::locate(col, c, j); }
};

// Q6_K: packed super-block [ql 128][qh 64][scales 16], d in the scale region. Quant chunk i (0..7): half h = i/4,
// q4 = i%4 selects ql bytes 64h + 16*q4 .. +15; kk = q4/2, l0 = 16*(q4%2). Low nibbles are element
// 128h + 32kk + l0 + jj (high bits from qh[32h + l0 + jj] bits 2kk), high nibbles 128h + 32(kk+2) + l0 + jj
// (bits 2(kk+2)); each run has one scale, scales[8h + 2k + q4%2].
template <>
struct ChunkDecoder<DType::Q6_K> {
  static constexpr int kCols = 32, kRuns = 2, kRunLen = 16;
  static constexpr bool kHasMin = false;
  struct Raw { U128 ql; U128 qh; U128 sc; uint16_t d; };
  KAIRO_HD static Raw load(const uint8_t* qs_row, const uint16_t* scale_row, int64_t c) {
    const uint8_t* sb = qs_row + (c >> 3) * 208;
    const int i = static_cast<int>(c & 7);
    const int h = i >> 2, q4 = i & 3;
    return {load_u128_stream(sb + 64 * h + 16 * q4), load_u128_stream(sb + 128 + 32 * h + 16 * (q4 & 1)),
            load_u128(sb + 192), load_u16(scale_row + (c >> 3))};
  }
  KAIRO_HD static void decode(const Raw& r, int64_t c, float* q, float* a, float* b) {
    const int i = static_cast<int>(c & 7);
    const int h = i >> 2, q4 = i & 3, kk = q4 >> 1;
    KAIRO_UNROLL
    for (int j = 0; j < 16; ++j) {
      const int l = byte_of(r.ql, j);
      const int hb = byte_of(r.qh, j);
      q[j] = static_cast<float>(((l & 0x0F) | (((hb >> (2 * kk)) & 3) << 4)) - 32);
      q[j + 16] = static_cast<float>(((l >> 4) | (((hb >> (2 * kk + 4)) & 3) << 4)) - 32);
    }
    const float d = half_to_float(r.d);
    a[0] = d * static_cast<float>(static_cast<int8_t>(byte_of(r.sc, 8 * h + 2 * kk + (q4 & 1))));
    a[1] = d * static_cast<float>(static_cast<int8_t>(byte_of(r.sc, 8 * h + 2 * kk + 4 + (q4 & 1))));
    b[0] = 0.0f;
    b[1] = 0.0f;
  }
  KAIRO_HD static int64_t col(int64_t c, int j) {
    const int i = static_cast<int>(c & 7);
    const int h = i >> 2, q4 = i & 3, kk = q4 >> 1;
    return (c >> 3) * 256 + 128 * h + 32 * (kk + 2 * (j >> 4)) + 16 * (q4 & 1) + (j & 15);
  }
  KAIRO_HD static void locate(int64_t col, int64_t* c, int* j) {
    const int o = static_cast<int>(col & 255);
    const int h = o >> 7, k = (o >> 5) & 3, l = o & 31;
    const int kk = k & 1, hi = k >> 1;
    *c = (col >> 8) * 8 + 4 * h + 2 * kk + (l >> 4);
    *j = (l & 15) + 16 * hi;
  }
};

// Value j of a decoded chunk. Types without a min skip the "+ b" so a zero keeps the sign the reference gives it.
template <typename D>
KAIRO_HD float chunk_value(const float* q, const float* a, const float* b, int j) {
  if constexpr (D::kHasMin) {
    return a[j / D::kRunLen] * q[j] + b[j / D::kRunLen];
  } else {
    return a[j / D::kRunLen] * q[j];
  }
}

// Calls fn.template operator()<T>() with T the compile-time type of `t` (one of cuda_supports()); returns false for
// any other type. Keeps the per-type switch in one place for every kernel family.
template <typename Fn>
bool dispatch_weight_type(DType t, Fn&& fn) {
  switch (t) {
    case DType::F32: fn.template operator()<DType::F32>(); return true;
    case DType::F16: fn.template operator()<DType::F16>(); return true;
    case DType::BF16: fn.template operator()<DType::BF16>(); return true;
    case DType::Q8_0: fn.template operator()<DType::Q8_0>(); return true;
    case DType::Q4_0: fn.template operator()<DType::Q4_0>(); return true;
    case DType::Q4_K: fn.template operator()<DType::Q4_K>(); return true;
    case DType::Q5_K: fn.template operator()<DType::Q5_K>(); return true;
    case DType::Q6_K: fn.template operator()<DType::Q6_K>(); return true;
    default: return false;
  }
}

}  // namespace kairo::kernels::cuda
