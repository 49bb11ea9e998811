#pragma once
// Byte layouts of the quantized block types, identical to ggml's block_* structs so GGUF tensor data can be read
// (and written) block by block. Every scale is an IEEE half stored as raw bits (convert with core/half.h).
// All structs have alignment 2 and no padding; code that reads them from a byte buffer of unknown alignment should
// memcpy a block out rather than cast.
#include <bit>
#include <cstdint>

#include "tensor/dtype.h"

namespace kairo {

inline constexpr int kQK = 32;    // elements per block of the legacy quants (Q4_0 .. Q8_0)
inline constexpr int kQK_K = 256; // elements per super-block of the K-quants
inline constexpr int kKScaleBytes = 12;  // packed 6-bit scales and mins of Q4_K / Q5_K

// x[i] = d * (q[i] - 8); q[i] is the low nibble of qs[i] for i < 16, the high nibble of qs[i-16] otherwise.
struct BlockQ4_0 {
  uint16_t d;
  uint8_t qs[kQK / 2];
};

// x[i] = d * q[i] + m; nibbles as in Q4_0.
struct BlockQ4_1 {
  uint16_t d;
  uint16_t m;
  uint8_t qs[kQK / 2];
};

// x[i] = d * (q[i] - 16); the 5th bit of q[i] is bit i of the little-endian uint32 in qh.
struct BlockQ5_0 {
  uint16_t d;
  uint8_t qh[4];
  uint8_t qs[kQK / 2];
};

// x[i] = d * q[i] + m; bits as in Q5_0.
struct BlockQ5_1 {
  uint16_t d;
  uint16_t m;
  uint8_t qh[4];
  uint8_t qs[kQK / 2];
};

// x[i] = d * qs[i].
struct BlockQ8_0 {
  uint16_t d;
  int8_t qs[kQK];
};

// 8 sub-blocks of 32: x = d * sc[j] * q - dmin * m[j], with 6-bit sc/m packed in `scales` (see unpack_scale_min_k4).
// Sub-blocks 2k and 2k+1 share qs[32k .. 32k+31]: low nibbles are sub-block 2k, high nibbles sub-block 2k+1.
struct BlockQ4_K {
  uint16_t d;
  uint16_t dmin;
  uint8_t scales[kKScaleBytes];
  uint8_t qs[kQK_K / 2];
};

// As Q4_K plus a 5th bit: for sub-block 2k element l the bit is qh[l] bit 2k, for sub-block 2k+1 it is bit 2k+1.
struct BlockQ5_K {
  uint16_t d;
  uint16_t dmin;
  uint8_t scales[kKScaleBytes];
  uint8_t qh[kQK_K / 8];
  uint8_t qs[kQK_K / 2];
};

// 16 sub-blocks of 16: x = d * scales[j] * (q - 32), q 6-bit. Per half (128 elements, ql += 64, qh += 32 per half),
// element l + 32*k (l < 32, k < 4): low 4 bits from ql[l + 32*(k&1)] (nibble k>>1), high 2 bits from qh[l] bits 2k.
struct BlockQ6_K {
  uint8_t ql[kQK_K / 2];
  uint8_t qh[kQK_K / 4];
  int8_t scales[kQK_K / 16];
  uint16_t d;
};

// MXFP4 (OCP microscaling, gpt-oss's expert weights): x[i] = kMxfp4Values[q[i]] * 2^(e - 128), nibbles as in Q4_0.
// The 4-bit codes are E2M1 floats (sign, 2 exponent bits, 1 mantissa bit); kMxfp4Values holds them doubled, so
// they are integers, and the E8M0 scale 2^(e - 127) is halved to compensate (ggml's layout and convention).
struct BlockMXFP4 {
  uint8_t e;
  uint8_t qs[kQK / 2];
};
inline constexpr int8_t kMxfp4Values[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};

// 2^(e - 128) as a float, exact for every e (e = 0 and 1 are subnormal): the MXFP4 block scale.
inline float mxfp4_scale(uint8_t e) {
  const uint32_t bits = e < 2 ? 0x00200000u << e : static_cast<uint32_t>(e - 1) << 23;
  return std::bit_cast<float>(bits);
}

static_assert(sizeof(BlockQ4_0) == 18);
static_assert(sizeof(BlockMXFP4) == 17);
static_assert(sizeof(BlockQ4_1) == 20);
static_assert(sizeof(BlockQ5_0) == 22);
static_assert(sizeof(BlockQ5_1) == 24);
static_assert(sizeof(BlockQ8_0) == 34);
static_assert(sizeof(BlockQ4_K) == 144);
static_assert(sizeof(BlockQ5_K) == 176);
static_assert(sizeof(BlockQ6_K) == 210);

// The dtype table (dtype.cpp) and these structs must agree; checked in one place at compile time here and at run
// time in tests (dtype_info is not constexpr).
template <typename Block>
struct BlockTraits;
template <> struct BlockTraits<BlockQ4_0> { static constexpr DType type = DType::Q4_0; static constexpr int n = kQK; };
template <> struct BlockTraits<BlockQ4_1> { static constexpr DType type = DType::Q4_1; static constexpr int n = kQK; };
template <> struct BlockTraits<BlockQ5_0> { static constexpr DType type = DType::Q5_0; static constexpr int n = kQK; };
template <> struct BlockTraits<BlockQ5_1> { static constexpr DType type = DType::Q5_1; static constexpr int n = kQK; };
template <> struct BlockTraits<BlockQ8_0> { static constexpr DType type = DType::Q8_0; static constexpr int n = kQK; };
template <> struct BlockTraits<BlockMXFP4> { static constexpr DType type = DType::MXFP4; static constexpr int n = kQK; };
template <> struct BlockTraits<BlockQ4_K> { static constexpr DType type = DType::Q4_K; static constexpr int n = kQK_K; };
template <> struct BlockTraits<BlockQ5_K> { static constexpr DType type = DType::Q5_K; static constexpr int n = kQK_K; };
template <> struct BlockTraits<BlockQ6_K> { static constexpr DType type = DType::Q6_K; static constexpr int n = kQK_K; };

// Sub-block j (0..7) of a Q4_K/Q5_K super-block: its 6-bit scale and min. Sub-blocks 0-3 keep theirs in the low
// 6 bits of bytes j and j+4; sub-blocks 4-7 split them into a nibble of byte j+4 and the top 2 bits of bytes j-4 / j.
inline void unpack_scale_min_k4(int j, const uint8_t* scales, uint8_t* scale, uint8_t* min) {
  if (j < 4) {
    *scale = scales[j] & 63;
    *min = scales[j + 4] & 63;
  } else {
    *scale = static_cast<uint8_t>((scales[j + 4] & 0x0F) | ((scales[j - 4] >> 6) << 4));
    *min = static_cast<uint8_t>((scales[j + 4] >> 4) | ((scales[j] >> 6) << 4));
  }
}

}  // namespace kairo
