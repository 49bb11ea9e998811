#pragma once
// Rounding helpers shared by the reference quantizers (internal to the tensor module). They reproduce ggml's
// conversions exactly for in-range finite values and stay defined (no UB, no UBSan trap) for NaN/inf/huge inputs.
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace kairo::quant {

// Round half to even, as ggml's nearest_int (adds 1.5 * 2^23 and reads the mantissa). ggml asserts |x| <= 4194303;
// out of that range (or NaN) we saturate instead so a bad weight cannot crash a conversion.
inline int nearest_int(float x) {
  if (!(x >= -4194303.f && x <= 4194303.f)) return x > 0 ? 4194303 : (x < 0 ? -4194303 : 0);
  const float v = x + 12582912.f;
  int32_t i;
  std::memcpy(&i, &v, sizeof(i));
  return (i & 0x007fffff) - 0x00400000;
}

// C's float -> int conversion (truncation toward zero) for in-range values; NaN gives 0, out of range saturates.
inline int trunc_to_int(float x) {
  if (!(x == x)) return 0;
  if (x >= 2147483520.f) return INT_MAX;
  if (x <= -2147483648.f) return INT_MIN;
  return static_cast<int>(x);
}

// roundf (half away from zero) converted to int, saturating like trunc_to_int.
inline int round_to_int(float x) {
  if (!(x == x)) return 0;
  if (x >= 2147483520.f) return INT_MAX;
  if (x <= -2147483648.f) return INT_MIN;
  return static_cast<int>(std::round(x));
}

}  // namespace kairo::quant
