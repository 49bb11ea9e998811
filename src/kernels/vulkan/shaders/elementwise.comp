#version 450
// swiglu (C = silu(A) * B), geglu (C = gelu_tanh(A) * B), add (A += B), add_bias (A[t, c] += B[c]) and scale
// (A *= factor): one invocation per element.
#include "common.glsl"
layout(local_size_x = 256) in;

layout(std430, binding = 0) buffer ABuf { float A[]; };
#if !defined(OP_SCALE)
layout(std430, binding = 1) readonly buffer BBuf { float B[]; };
#endif
#if defined(OP_SWIGLU) || defined(OP_GEGLU) || defined(OP_SWIGLU_OAI)
layout(std430, binding = 2) writeonly buffer CBuf { float C[]; };
#endif

layout(push_constant) uniform Push {
  uint n;       // elements
  uint a_off;
  uint b_off;
  uint c_off;
  uint n_cols;  // add_bias: row length
  float factor; // scale; swiglu_oai: alpha
  float limit;  // swiglu_oai
} pc;

void main() {
  const uint i = flat_group() * 256u + gl_LocalInvocationID.x;
  if (i >= pc.n) return;
#if defined(OP_SWIGLU)
  const float g = A[pc.a_off + i];
  C[pc.c_off + i] = g / (1.0 + exp(-g)) * B[pc.b_off + i];
#elif defined(OP_GEGLU)
  // gelu(g) = g * sigmoid(2 z), z = sqrt(2/pi) (g + 0.044715 g^3)
  const float g = A[pc.a_off + i];
  C[pc.c_off + i] = g / (1.0 + exp(-1.5957691216057308 * (g + 0.044715 * g * g * g))) * B[pc.b_off + i];
#elif defined(OP_SWIGLU_OAI)
  const float x = min(A[pc.a_off + i], pc.limit);
  const float y = clamp(B[pc.b_off + i], -pc.limit, pc.limit);
  C[pc.c_off + i] = x / (1.0 + exp(-pc.factor * x)) * (y + 1.0);
#elif defined(OP_SCALE)
  A[pc.a_off + i] = A[pc.a_off + i] * pc.factor;
#elif defined(OP_ADD)
  A[pc.a_off + i] = A[pc.a_off + i] + B[pc.b_off + i];
#elif defined(OP_ADD_BIAS)
  A[pc.a_off + i] = A[pc.a_off + i] + B[pc.b_off + i % pc.n_cols];
#endif
}
