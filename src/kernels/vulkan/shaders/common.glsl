// Helpers shared by the shaders: IEEE half / bfloat16 encoding done in integer math (round to nearest even, exactly
// as core/half.h), so KV bytes written here are those the CPU reference writes, whatever the driver's own
// conversion rounding is.

uint f32_to_f16_bits(float f) {
  uint x = floatBitsToUint(f);
  uint sign = (x >> 16) & 0x8000u;
  uint a = x & 0x7fffffffu;
  if (a >= 0x7f800000u) return sign | 0x7c00u | (a > 0x7f800000u ? 0x200u : 0u);
  if (a >= 0x477ff000u) return sign | 0x7c00u;
  if (a < 0x38800000u) {
    if (a < 0x33000000u) return sign;
    uint e = a >> 23;
    uint m = (a & 0x7fffffu) | 0x800000u;
    uint shift = 126u - e;
    uint hm = m >> shift;
    uint rem = m & ((1u << shift) - 1u);
    uint halfway = 1u << (shift - 1u);
    if (rem > halfway || (rem == halfway && (hm & 1u) != 0u)) ++hm;
    return sign | hm;
  }
  uint h = (a >> 13) - (112u << 10);
  uint rem = a & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u) != 0u)) ++h;
  return sign | h;
}

uint f32_to_bf16_bits(float f) {
  uint x = floatBitsToUint(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return (x >> 16) | 0x40u;
  x += 0x7fffu + ((x >> 16) & 1u);
  return x >> 16;
}

float f16_bits_to_f32(uint h) { return unpackHalf2x16(h).x; }  // f16 -> f32 is exact
float bf16_bits_to_f32(uint b) { return uintBitsToFloat(b << 16); }

// Element offsets of workgroups beyond 65535 in x: the host folds large grids into (x, y) with x <= 65535.
uint flat_group() { return gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x; }
