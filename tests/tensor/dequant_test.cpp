// Hand-built blocks with known scales and quants; the expected floats are worked out here from the layout (written
// out as literals or from the documented bit positions), never by calling the code under test.
#include "tensor/dequant.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "tensor/blocks.h"

namespace kairo {
namespace {

template <typename Block>
std::vector<float> dequant(const Block& b) {
  std::vector<float> out(BlockTraits<Block>::n, std::nanf(""));
  dequantize_row(BlockTraits<Block>::type, &b, out.data(), BlockTraits<Block>::n);
  return out;
}

void expect_exact(const std::vector<float>& got, const std::vector<float>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(got[i], want[i]) << "element " << i;
}

// Half constants used below (exactly representable):
constexpr uint16_t kHalfQuarter = 0x3400;  // 0.25
constexpr uint16_t kHalfHalf = 0x3800;     // 0.5
constexpr uint16_t kHalfMinusOne = 0xbc00; // -1.0
constexpr uint16_t kHalfTwo = 0x4000;      // 2.0
constexpr uint16_t kHalfThird = 0x3555;    // exponent 13, mantissa 341: 0.25 * (1 + 341/1024) = 0.333251953125
constexpr float kThird = 0.333251953125f;

TEST(DequantHand, F32) {
  const float src[3] = {1.5f, -0.0f, std::numeric_limits<float>::infinity()};
  float dst[3];
  dequantize_row(DType::F32, src, dst, 3);
  EXPECT_EQ(dst[0], 1.5f);
  EXPECT_TRUE(std::signbit(dst[1]));
  EXPECT_EQ(dst[2], std::numeric_limits<float>::infinity());
}

TEST(DequantHand, F16) {
  const uint16_t src[7] = {0x3c00, 0xc000, 0x7bff, 0x0001, 0x7c00, 0x8000, kHalfThird};
  float dst[7];
  dequantize_row(DType::F16, src, dst, 7);
  EXPECT_EQ(dst[0], 1.0f);
  EXPECT_EQ(dst[1], -2.0f);
  EXPECT_EQ(dst[2], 65504.0f);
  EXPECT_EQ(dst[3], 5.9604644775390625e-08f);  // 2^-24
  EXPECT_EQ(dst[4], std::numeric_limits<float>::infinity());
  EXPECT_EQ(dst[5], 0.0f);
  EXPECT_TRUE(std::signbit(dst[5]));
  EXPECT_EQ(dst[6], kThird);
}

TEST(DequantHand, BF16) {
  const uint16_t src[5] = {0x3f80, 0xc049, 0x4780, 0x0001, 0xff80};
  float dst[5];
  dequantize_row(DType::BF16, src, dst, 5);
  EXPECT_EQ(dst[0], 1.0f);
  EXPECT_EQ(dst[1], -3.140625f);  // 0xc0490000
  EXPECT_EQ(dst[2], 65536.0f);    // 0x47800000
  EXPECT_EQ(dst[3], 9.18354961579912115600575419705e-41f);  // 2^-133
  EXPECT_EQ(dst[4], -std::numeric_limits<float>::infinity());
}

TEST(DequantHand, Q8_0) {
  BlockQ8_0 b;
  b.d = kHalfHalf;
  for (int j = 0; j < 32; ++j) b.qs[j] = static_cast<int8_t>(8 * j - 128);  // -128, -120, ..., 120
  // 0.5 * (8j - 128) = 4j - 64
  expect_exact(dequant(b), {-64, -60, -56, -52, -48, -44, -40, -36, -32, -28, -24, -20, -16, -12, -8, -4,
                            0,   4,   8,   12,  16,  20,  24,  28,  32,  36,  40,  44,  48,  52,  56, 60});
  b.d = kHalfThird;
  b.qs[0] = 127;
  b.qs[1] = -1;
  const std::vector<float> third = dequant(b);
  EXPECT_EQ(third[0], 127 * kThird);
  EXPECT_EQ(third[1], -kThird);
}

TEST(DequantHand, Q4_0) {
  BlockQ4_0 b;
  b.d = kHalfThird;
  for (int j = 0; j < 16; ++j) b.qs[j] = static_cast<uint8_t>(j | ((15 - j) << 4));
  // Low nibbles (elements 0-15) are j, high nibbles (16-31) are 15 - j; the level is nibble - 8.
  const int levels[32] = {-8, -7, -6, -5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5, 6, 7,
                          7,  6,  5,  4,  3,  2,  1,  0, -1, -2, -3, -4, -5, -6, -7, -8};
  std::vector<float> want(32);
  for (int i = 0; i < 32; ++i) want[i] = static_cast<float>(levels[i]) * kThird;
  expect_exact(dequant(b), want);
  EXPECT_EQ(dequant(b)[0], -2.666015625f);  // -8 * 0.333251953125
}

TEST(DequantHand, MXFP4) {
  // e = 127 + 1: the scale 2^(e - 128) = 2^0 = 1, so each value is the doubled E2M1 value of its code:
  // codes 0..7 -> 0 1 2 3 4 6 8 12 (E2M1 0 .5 1 1.5 2 3 4 6, doubled), 8..15 the same negated.
  BlockMXFP4 b;
  b.e = 128;
  for (int j = 0; j < 16; ++j) b.qs[j] = static_cast<uint8_t>(j | ((15 - j) << 4));
  const float mag[8] = {0, 1, 2, 3, 4, 6, 8, 12};
  std::vector<float> want(32);
  for (int j = 0; j < 16; ++j) {
    want[j] = j < 8 ? mag[j] : -mag[j - 8];
    want[j + 16] = (15 - j) < 8 ? mag[15 - j] : -mag[15 - j - 8];
  }
  expect_exact(dequant(b), want);
  // Other scales: 2^(e - 128) exactly, down to the subnormal 2^-128 of e = 0 and up to 2^126 of e = 254.
  for (const auto& [e, scale] : {std::pair<int, float>{130, 4.0f}, {125, 0.125f}, {1, std::ldexp(1.0f, -127)},
                                 {0, std::ldexp(1.0f, -128)}, {254, std::ldexp(1.0f, 126)}}) {
    b.e = static_cast<uint8_t>(e);
    const std::vector<float> got = dequant(b);
    EXPECT_EQ(got[1], scale) << "e = " << e;        // code 1: 1 x scale
    EXPECT_EQ(got[15], -12 * scale) << "e = " << e;  // code 15: -12 x scale
  }
}

TEST(DequantHand, Q4_1) {
  BlockQ4_1 b;
  b.d = kHalfHalf;
  b.m = kHalfMinusOne;
  for (int j = 0; j < 16; ++j) b.qs[j] = static_cast<uint8_t>((15 - j) | (j << 4));
  // x = 0.5 * q - 1; low nibbles 15..0, high nibbles 0..15.
  expect_exact(dequant(b), {6.5f, 6.0f, 5.5f, 5.0f, 4.5f, 4.0f, 3.5f, 3.0f, 2.5f, 2.0f, 1.5f, 1.0f, 0.5f, 0.0f,
                            -0.5f, -1.0f, -1.0f, -0.5f, 0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 2.5f, 3.0f, 3.5f, 4.0f, 4.5f,
                            5.0f, 5.5f, 6.0f, 6.5f});
}

TEST(DequantHand, Q5_0) {
  BlockQ5_0 b;
  b.d = kHalfQuarter;
  for (int j = 0; j < 16; ++j) b.qs[j] = static_cast<uint8_t>(j | (j << 4));
  // qh = 0xa5a5f00f little-endian. Bits 0-15 (elements 0-15): 0xf00f -> set for 0-3 and 12-15.
  // Bits 16-31 (elements 16-31): 0xa5a5 -> set for element 16 + {0, 2, 5, 7, 8, 10, 13, 15}.
  const uint8_t qh[4] = {0x0f, 0xf0, 0xa5, 0xa5};
  std::memcpy(b.qh, qh, 4);
  // level = nibble + 16 * bit - 16, x = 0.25 * level
  expect_exact(dequant(b), {0.0f,  0.25f, 0.5f,  0.75f, -3.0f,  -2.75f, -2.5f,  -2.25f,  // 0-7
                            -2.0f, -1.75f, -1.5f, -1.25f, 3.0f, 3.25f,  3.5f,   3.75f,   // 8-15
                            0.0f,  -3.75f, 0.5f,  -3.25f, -3.0f, 1.25f, -2.5f,  1.75f,   // 16-23
                            2.0f,  -1.75f, 2.5f,  -1.25f, -1.0f, 3.25f, -0.5f,  3.75f}); // 24-31
}

TEST(DequantHand, Q5_1) {
  BlockQ5_1 b;
  b.d = kHalfHalf;
  b.m = kHalfTwo;
  for (int j = 0; j < 16; ++j) b.qs[j] = static_cast<uint8_t>(j | (j << 4));
  const uint8_t qh[4] = {0x0f, 0xf0, 0xa5, 0xa5};  // same bits as the Q5_0 case
  std::memcpy(b.qh, qh, 4);
  // level = nibble + 16 * bit (no offset), x = 0.5 * level + 2
  expect_exact(dequant(b), {10.0f, 10.5f, 11.0f, 11.5f, 4.0f,  4.5f,  5.0f,  5.5f,    // 0-7
                            6.0f,  6.5f,  7.0f,  7.5f,  16.0f, 16.5f, 17.0f, 17.5f,   // 8-15
                            10.0f, 2.5f,  11.0f, 3.5f,  4.0f,  12.5f, 5.0f,  13.5f,   // 16-23
                            14.0f, 6.5f,  15.0f, 7.5f,  8.0f,  16.5f, 9.0f,  17.5f}); // 24-31
}

// Q4_K / Q5_K: d = 0.5, dmin = 0.25, sub-block scales {1, 2, 3, 4, 33, 40, 17, 63} and mins {0, 5, 10, 63, 16, 1,
// 48, 7}, packed by hand:
//   bytes 0-3: scale j (6 bits) | (scale j+4 >> 4) << 6: 1|2<<6, 2|2<<6, 3|1<<6, 4|3<<6 = 0x81 0x82 0x43 0xc4
//   bytes 4-7: min j | (min j+4 >> 4) << 6:              0|1<<6, 5|0, 10|3<<6, 63|0   = 0x40 0x05 0xca 0x3f
//   bytes 8-11: (scale j+4 & 15) | (min j+4 & 15) << 4:  1|0, 8|1<<4, 1|0, 15|7<<4    = 0x01 0x18 0x01 0x7f
constexpr uint8_t kKScales[12] = {0x81, 0x82, 0x43, 0xc4, 0x40, 0x05, 0xca, 0x3f, 0x01, 0x18, 0x01, 0x7f};
constexpr int kKSc[8] = {1, 2, 3, 4, 33, 40, 17, 63};
constexpr int kKMin[8] = {0, 5, 10, 63, 16, 1, 48, 7};

TEST(DequantHand, UnpackScaleMinK4) {
  for (int j = 0; j < 8; ++j) {
    uint8_t sc, m;
    unpack_scale_min_k4(j, kKScales, &sc, &m);
    EXPECT_EQ(sc, kKSc[j]) << j;
    EXPECT_EQ(m, kKMin[j]) << j;
  }
}

// Low nibble of qs[32k + l] is l & 15 (sub-block 2k), high nibble (l + 3) & 15 (sub-block 2k + 1).
uint8_t k_nibbles(int l) { return static_cast<uint8_t>((l & 15) | (((l + 3) & 15) << 4)); }

TEST(DequantHand, Q4_K) {
  BlockQ4_K b;
  b.d = kHalfHalf;
  b.dmin = kHalfQuarter;
  std::memcpy(b.scales, kKScales, 12);
  for (int i = 0; i < 128; ++i) b.qs[i] = k_nibbles(i % 32);
  const std::vector<float> got = dequant(b);
  for (int e = 0; e < 256; ++e) {
    const int sub = e / 32, l = e % 32;
    const int q = (sub % 2 == 0) ? (l & 15) : ((l + 3) & 15);
    EXPECT_EQ(got[e], 0.5f * kKSc[sub] * q - 0.25f * kKMin[sub]) << e;
  }
  // Worked by hand: e = 37: sub 1, l 5, q = 8: 0.5*2*8 - 0.25*5 = 6.75. e = 100: sub 3, l 4, q = 7:
  // 0.5*4*7 - 0.25*63 = -1.75. e = 130: sub 4, l 2, q = 2: 0.5*33*2 - 0.25*16 = 29. e = 168: sub 5, l 8, q = 11:
  // 0.5*40*11 - 0.25 = 219.75. e = 255: sub 7, l 31, q = 2: 0.5*63*2 - 0.25*7 = 61.25.
  EXPECT_EQ(got[0], 0.0f);
  EXPECT_EQ(got[37], 6.75f);
  EXPECT_EQ(got[100], -1.75f);
  EXPECT_EQ(got[130], 29.0f);
  EXPECT_EQ(got[168], 219.75f);
  EXPECT_EQ(got[255], 61.25f);
}

TEST(DequantHand, Q5_K) {
  BlockQ5_K b;
  b.d = kHalfHalf;
  b.dmin = kHalfQuarter;
  std::memcpy(b.scales, kKScales, 12);
  for (int i = 0; i < 128; ++i) b.qs[i] = k_nibbles(i % 32);
  for (int l = 0; l < 32; ++l) b.qh[l] = static_cast<uint8_t>(l * 37);
  const std::vector<float> got = dequant(b);
  for (int e = 0; e < 256; ++e) {
    const int sub = e / 32, l = e % 32;
    const int low = (sub % 2 == 0) ? (l & 15) : ((l + 3) & 15);
    const int q = low + 16 * ((b.qh[l] >> sub) & 1);  // sub-block s takes bit s of qh[l]
    EXPECT_EQ(got[e], 0.5f * kKSc[sub] * q - 0.25f * kKMin[sub]) << e;
  }
  // By hand: e = 67: sub 2, l 3, qh[3] = 111 = 0b01101111, bit 2 set: q = 3 + 16 = 19: 0.5*3*19 - 0.25*10 = 26.
  // e = 168: sub 5, l 8, qh[8] = 296 & 255 = 40 = 0b00101000, bit 5 set: q = 27: 0.5*40*27 - 0.25 = 539.75.
  // e = 37: qh[5] = 185 = 0b10111001, bit 1 clear: 6.75 as in Q4_K. e = 255: qh[31] = 123, bit 7 clear: 61.25.
  EXPECT_EQ(got[67], 26.0f);
  EXPECT_EQ(got[168], 539.75f);
  EXPECT_EQ(got[37], 6.75f);
  EXPECT_EQ(got[255], 61.25f);
}

TEST(DequantHand, Q6_K) {
  BlockQ6_K b;
  b.d = kHalfQuarter;
  const int8_t scales[16] = {1, -1, 2, -2, 3, -3, 4, -4, 127, -128, 5, 6, 7, 8, 9, 10};
  std::memcpy(b.scales, scales, 16);
  for (int i = 0; i < 128; ++i) b.ql[i] = static_cast<uint8_t>(i);
  for (int i = 0; i < 64; ++i) b.qh[i] = static_cast<uint8_t>(i * 29);
  const std::vector<float> got = dequant(b);
  for (int e = 0; e < 256; ++e) {
    // Per 128-element half: element l + 32k takes the low 4 bits from ql[l + 32 * (k & 1)] (low nibble for
    // k < 2, high for k >= 2) and the top 2 bits from qh[l] bits 2k, 2k+1. Scale index is e / 16.
    const int half = e / 128, k = (e % 128) / 32, l = e % 32;
    const int low = (b.ql[64 * half + l + 32 * (k & 1)] >> (4 * (k >> 1))) & 15;
    const int high = (b.qh[32 * half + l] >> (2 * k)) & 3;
    EXPECT_EQ(got[e], 0.25f * scales[e / 16] * ((low | (high << 4)) - 32)) << e;
  }
  // By hand: e = 0: q = 0 -> 0.25 * 1 * -32 = -8. e = 33: ql[33] & 15 = 1, qh[1] = 29 = 0b00011101, bits 2-3 = 3:
  // q = 49 -> 0.25 * 2 * 17 = 8.5. e = 69: ql[5] >> 4 = 0, qh[5] = 145 = 0b10010001, bits 4-5 = 1: q = 16 ->
  // 0.25 * 3 * -16 = -12. e = 128: ql[64] & 15 = 0, qh[32] = 160, bits 0-1 = 0 -> 0.25 * 127 * -32 = -1016.
  // e = 144: ql[80] & 15 = 0, qh[48] = 112, bits 0-1 = 0 -> 0.25 * -128 * -32 = 1024. e = 255: ql[127] >> 4 = 7,
  // qh[63] = 35 = 0b00100011, bits 6-7 = 0: q = 7 -> 0.25 * 10 * -25 = -62.5.
  EXPECT_EQ(got[0], -8.0f);
  EXPECT_EQ(got[33], 8.5f);
  EXPECT_EQ(got[69], -12.0f);
  EXPECT_EQ(got[128], -1016.0f);
  EXPECT_EQ(got[144], 1024.0f);
  EXPECT_EQ(got[255], -62.5f);
}

TEST(Dequant, RowOfSeveralBlocksFromUnalignedBuffer) {
  // Two Q8_0 blocks placed at an odd offset: dequantize_row must not assume alignment, and must advance by blocks.
  BlockQ8_0 blocks[2];
  blocks[0].d = kHalfHalf;
  blocks[1].d = kHalfTwo;
  for (int j = 0; j < 32; ++j) {
    blocks[0].qs[j] = static_cast<int8_t>(j);
    blocks[1].qs[j] = static_cast<int8_t>(-j);
  }
  std::vector<uint8_t> buf(sizeof(blocks) + 1);
  std::memcpy(buf.data() + 1, blocks, sizeof(blocks));
  std::vector<float> out(64);
  dequantize_row(DType::Q8_0, buf.data() + 1, out.data(), 64);
  for (int j = 0; j < 32; ++j) {
    EXPECT_EQ(out[j], 0.5f * j);
    EXPECT_EQ(out[32 + j], -2.0f * j);
  }
}

TEST(Dequant, TypedFormMatchesRowForm) {
  BlockQ6_K b[2];
  for (int i = 0; i < 2; ++i) {
    b[i].d = i ? kHalfThird : kHalfQuarter;
    for (int j = 0; j < 128; ++j) b[i].ql[j] = static_cast<uint8_t>(j * 7 + i);
    for (int j = 0; j < 64; ++j) b[i].qh[j] = static_cast<uint8_t>(j * 13 + i);
    for (int j = 0; j < 16; ++j) b[i].scales[j] = static_cast<int8_t>(j * 17 - 100);
  }
  std::vector<float> row(512), typed(512);
  dequantize_row(DType::Q6_K, b, row.data(), 512);
  dequantize_blocks(b, typed.data(), 2);
  EXPECT_EQ(row, typed);
}

}  // namespace
}  // namespace kairo
