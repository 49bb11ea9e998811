#version 450
// Rotates pairs of x in place: one invocation per (token, head, pair). The inverse frequency of pair i comes from
// the host in double precision as a float pair (hi, lo); the angle pos * freq_scale * inv_freq is formed as a
// float pair too, then reduced to [-pi, pi] with a two-part 2 pi (Cody-Waite) before sin/cos, which GLSL only
// promises to be accurate there. Positions up to 2^24 stay within a few float ulps of the reference's double angle.
//
// Exact products use Dekker's split, not fma(): Vulkan lets fma() round like a separate multiply and add, and
// lavapipe does. `precise` keeps the compiler from fusing or reassociating the error terms away.
#include "common.glsl"
layout(local_size_x = 64) in;

layout(std430, binding = 0) buffer XBuf { float X[]; };
layout(std430, binding = 1) readonly buffer PBuf { int POS[]; };
layout(std430, binding = 2) readonly buffer FBuf { vec2 FREQ[]; };

layout(push_constant) uniform Push {
  uint n_heads;
  uint head_dim;
  uint n_half;   // n_rot / 2 pairs per head
  uint neox;
  uint x_off;
  uint pos_off;
  uint freq_off; // in vec2
  float freq_scale;
  uint n_pairs;  // n_tokens * n_heads * n_half
  float mscale;  // cos and sin times it (YaRN); 1 otherwise
} pc;

const float TWO_PI_HI = 6.28318548202514648;   // float(2 pi)
const float TWO_PI_LO = -1.7484556e-07;         // 2 pi - TWO_PI_HI
const float INV_TWO_PI = 0.159154943091895336;

// p + e == a * b exactly (barring overflow).
void two_prod(float a, float b, out float p, out float e) {
  precise float pp = a * b;
  precise float ca = 4097.0 * a;
  precise float ah = ca - (ca - a);
  precise float al = a - ah;
  precise float cb = 4097.0 * b;
  precise float bh = cb - (cb - b);
  precise float bl = b - bh;
  precise float ee = ((ah * bh - pp) + ah * bl + al * bh) + al * bl;
  p = pp;
  e = ee;
}

void main() {
  const uint g = flat_group() * 64u + gl_LocalInvocationID.x;
  if (g >= pc.n_pairs) return;
  const uint i = g % pc.n_half;
  const uint th = g / pc.n_half;  // t * n_heads + h
  const uint t = th / pc.n_heads;

  const float pos = float(POS[pc.pos_off + t]);
  float p_hi, p_lo;
  two_prod(pos, pc.freq_scale, p_hi, p_lo);
  const vec2 f = FREQ[pc.freq_off + i];
  float a_hi, a_err;
  two_prod(p_hi, f.x, a_hi, a_err);
  precise float a_lo = a_err + (p_hi * f.y + p_lo * f.x);
  // r = a - k 2pi: k * TWO_PI_HI is exact as a pair and a_hi - its high part is exact (Sterbenz: they are within a
  // factor of 2 for k >= 1), so only the tiny terms round.
  const float k = round(a_hi * INV_TWO_PI);
  float k_hi, k_lo;
  two_prod(k, TWO_PI_HI, k_hi, k_lo);
  precise float r = a_hi - k_hi;
  r = r - k_lo;
  r = r - k * TWO_PI_LO;
  r = r + a_lo;
  const float c = cos(r) * pc.mscale;
  const float s = sin(r) * pc.mscale;

  const uint base = pc.x_off + th * pc.head_dim;
  const uint i0 = pc.neox != 0u ? i : 2u * i;
  const uint i1 = pc.neox != 0u ? i + pc.n_half : 2u * i + 1u;
  const float a = X[base + i0];
  const float b = X[base + i1];
  precise float o0 = a * c - b * s;
  precise float o1 = a * s + b * c;
  X[base + i0] = o0;
  X[base + i1] = o1;
}
