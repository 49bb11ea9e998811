// f16/bf16 conversions: exact on edge values (subnormals, inf, NaN, rounding ties) and against an independent
// double-precision reference over a sweep of float bit patterns.
#include "core/half.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace kairo {
namespace {

// Value of a half bit pattern computed with doubles, from the IEEE definition.
double half_value(uint16_t h) {
  const int sign = (h & 0x8000) ? -1 : 1;
  const int exp = (h >> 10) & 0x1f;
  const int mant = h & 0x3ff;
  if (exp == 0) return sign * std::ldexp(static_cast<double>(mant), -24);
  if (exp == 31) return mant ? std::numeric_limits<double>::quiet_NaN() : sign * HUGE_VAL;
  return sign * std::ldexp(static_cast<double>(1024 + mant), exp - 25);
}

// Round-to-nearest-even float -> half by search over the positive half values (which increase with the bit
// pattern); values at or beyond the midpoint 65520 between the largest half and 2^16 overflow to infinity.
uint16_t reference_f32_to_f16(float f) {
  const uint16_t sign = std::signbit(f) ? 0x8000 : 0;
  const double a = std::fabs(static_cast<double>(f));
  if (std::isinf(f) || a >= 65520.0) return sign | 0x7c00;
  uint16_t lo = 0, hi = 0x7bff;  // largest h with half_value(h) <= a
  while (lo < hi) {
    const uint16_t mid = static_cast<uint16_t>((lo + hi + 1) / 2);
    if (half_value(mid) <= a) lo = mid; else hi = static_cast<uint16_t>(mid - 1);
  }
  const double below = half_value(lo);
  const double above = lo == 0x7bff ? 65536.0 : half_value(static_cast<uint16_t>(lo + 1));
  uint16_t h = lo;
  if (a - below > above - a || (a - below == above - a && (lo & 1))) h = static_cast<uint16_t>(lo + 1);
  return sign | h;
}

TEST(Half, F16ToF32MatchesDefinitionForEveryPattern) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const float got = f16_to_f32(static_cast<uint16_t>(h));
    const double want = half_value(static_cast<uint16_t>(h));
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(got)) << std::hex << h;
    } else {
      EXPECT_EQ(static_cast<double>(got), want) << std::hex << h;
      EXPECT_EQ(std::signbit(got), (h & 0x8000) != 0) << std::hex << h;
    }
  }
}

TEST(Half, F16RoundTripsEveryNonNaNPattern) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const bool nan = ((h >> 10) & 0x1f) == 0x1f && (h & 0x3ff) != 0;
    if (nan) continue;  // NaN payloads are not preserved; covered by F32ToF16NaNStaysNaN
    EXPECT_EQ(f32_to_f16(f16_to_f32(static_cast<uint16_t>(h))), h) << std::hex << h;
  }
}

TEST(Half, F32ToF16EdgeValues) {
  EXPECT_EQ(f32_to_f16(0.0f), 0x0000);
  EXPECT_EQ(f32_to_f16(-0.0f), 0x8000);
  EXPECT_EQ(f32_to_f16(1.0f), 0x3c00);
  EXPECT_EQ(f32_to_f16(-2.0f), 0xc000);
  EXPECT_EQ(f32_to_f16(0.333251953125f), 0x3555);
  // Largest finite half, and the overflow boundary at its midpoint with 2^16 (ties to even = infinity).
  EXPECT_EQ(f32_to_f16(65504.0f), 0x7bff);
  EXPECT_EQ(f32_to_f16(65519.996f), 0x7bff);
  EXPECT_EQ(f32_to_f16(65520.0f), 0x7c00);
  EXPECT_EQ(f32_to_f16(-65520.0f), 0xfc00);
  EXPECT_EQ(f32_to_f16(1e10f), 0x7c00);
  EXPECT_EQ(f32_to_f16(std::numeric_limits<float>::infinity()), 0x7c00);
  EXPECT_EQ(f32_to_f16(-std::numeric_limits<float>::infinity()), 0xfc00);
  // Subnormals: 2^-24 is the smallest; 2^-25 is the tie between 0 and it (to even: 0); 3 * 2^-25 ties to 2.
  EXPECT_EQ(f32_to_f16(std::ldexp(1.0f, -24)), 0x0001);
  EXPECT_EQ(f32_to_f16(-std::ldexp(1.0f, -24)), 0x8001);
  EXPECT_EQ(f32_to_f16(std::ldexp(1.0f, -25)), 0x0000);
  EXPECT_EQ(f32_to_f16(std::ldexp(1.0001f, -25)), 0x0001);
  EXPECT_EQ(f32_to_f16(std::ldexp(3.0f, -25)), 0x0002);
  EXPECT_EQ(f32_to_f16(std::ldexp(5.0f, -25)), 0x0002);
  EXPECT_EQ(f32_to_f16(std::ldexp(1023.0f, -24)), 0x03ff);  // largest subnormal
  EXPECT_EQ(f32_to_f16(std::ldexp(1023.5f, -24)), 0x0400);  // tie rounds up into the smallest normal
  EXPECT_EQ(f32_to_f16(std::ldexp(1.0f, -14)), 0x0400);
  EXPECT_EQ(f32_to_f16(1e-10f), 0x0000);
  EXPECT_EQ(f32_to_f16(-1e-10f), 0x8000);
  EXPECT_EQ(f32_to_f16(std::numeric_limits<float>::denorm_min()), 0x0000);
  // Normal ties: 1 + 2^-11 is halfway between 0x3c00 and 0x3c01 (to even: down), 1 + 3 * 2^-11 halfway between
  // 0x3c01 and 0x3c02 (to even: up); a hair above a midpoint rounds up.
  EXPECT_EQ(f32_to_f16(1.0f + std::ldexp(1.0f, -11)), 0x3c00);
  EXPECT_EQ(f32_to_f16(1.0f + std::ldexp(3.0f, -11)), 0x3c02);
  EXPECT_EQ(f32_to_f16(1.0f + std::ldexp(1.0f, -11) + std::ldexp(1.0f, -23)), 0x3c01);
  // Rounding that carries into the exponent: just under 2 rounds to 2.0.
  EXPECT_EQ(f32_to_f16(1.99999f), 0x4000);
}

TEST(Half, F32ToF16NaNStaysNaN) {
  for (uint32_t bits : {0x7fc00000u, 0x7f800001u, 0xffc00000u, 0x7fffffffu, 0x7f802000u}) {
    const uint16_t h = f32_to_f16(f32_from_bits(bits));
    EXPECT_EQ(h & 0x7c00, 0x7c00) << std::hex << bits;
    EXPECT_NE(h & 0x03ff, 0) << std::hex << bits;
    EXPECT_EQ((h & 0x8000) != 0, (bits >> 31) != 0) << std::hex << bits;
  }
}

TEST(Half, F32ToF16MatchesReferenceOnSweep) {
  // A stride co-prime with the mantissa width visits every exponent with varied low bits (~1M patterns).
  for (uint64_t bits = 0; bits <= 0xffffffffull; bits += 4093) {
    const float f = f32_from_bits(static_cast<uint32_t>(bits));
    if (std::isnan(f)) continue;
    ASSERT_EQ(f32_to_f16(f), reference_f32_to_f16(f)) << std::hex << bits;
  }
}

TEST(BFloat16, ToF32IsExactShift) {
  EXPECT_EQ(bf16_to_f32(0x3f80), 1.0f);
  EXPECT_EQ(bf16_to_f32(0xc049), -3.140625f);
  EXPECT_EQ(bf16_to_f32(0x0001), std::ldexp(1.0f, -133));  // smallest bf16 subnormal
  EXPECT_EQ(bf16_to_f32(0x7f80), std::numeric_limits<float>::infinity());
  EXPECT_EQ(bf16_to_f32(0xff80), -std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(bf16_to_f32(0x7fc0)));
  EXPECT_TRUE(std::signbit(bf16_to_f32(0x8000)));
}

TEST(BFloat16, FromF32RoundsToNearestEven) {
  EXPECT_EQ(f32_to_bf16(1.0f), 0x3f80);
  EXPECT_EQ(f32_to_bf16(-0.0f), 0x8000);
  EXPECT_EQ(f32_to_bf16(f32_from_bits(0x3f808000)), 0x3f80);  // tie, even below
  EXPECT_EQ(f32_to_bf16(f32_from_bits(0x3f818000)), 0x3f82);  // tie, even above
  EXPECT_EQ(f32_to_bf16(f32_from_bits(0x3f808001)), 0x3f81);  // just above the tie
  EXPECT_EQ(f32_to_bf16(f32_from_bits(0x3f807fff)), 0x3f80);  // just below the tie
  EXPECT_EQ(f32_to_bf16(std::numeric_limits<float>::max()), 0x7f80);  // rounds up to infinity
  EXPECT_EQ(f32_to_bf16(std::numeric_limits<float>::infinity()), 0x7f80);
  EXPECT_EQ(f32_to_bf16(-std::numeric_limits<float>::infinity()), 0xff80);
  EXPECT_EQ(f32_to_bf16(f32_from_bits(0x00000001)), 0x0000);  // subnormals round like any other value
  EXPECT_EQ(f32_to_bf16(f32_from_bits(0x00008000)), 0x0000);
  EXPECT_EQ(f32_to_bf16(f32_from_bits(0x00018000)), 0x0002);
  EXPECT_EQ(f32_to_bf16(f32_from_bits(0x007fffff)), 0x0080);  // largest subnormal carries to the smallest normal
}

TEST(BFloat16, NaNIsQuietAndNeverBecomesInfinity) {
  // 0x7f800001 would truncate to 0x7f80 (infinity) without the quiet bit.
  for (uint32_t bits : {0x7f800001u, 0xff800001u, 0x7fc00000u, 0x7fbfffffu}) {
    const uint16_t b = f32_to_bf16(f32_from_bits(bits));
    EXPECT_TRUE(std::isnan(bf16_to_f32(b))) << std::hex << bits;
    EXPECT_NE(b & 0x0040, 0) << std::hex << bits;
  }
}

TEST(BFloat16, RoundTripsEveryNonNaNPattern) {
  for (uint32_t b = 0; b < 0x10000; ++b) {
    const float f = bf16_to_f32(static_cast<uint16_t>(b));
    if (std::isnan(f)) continue;
    EXPECT_EQ(f32_to_bf16(f), b) << std::hex << b;
  }
}

}  // namespace
}  // namespace kairo
