#version 450
// K and V of each token into their cache slots; one invocation per pair of values (head_dim is even, so a pair of
// 16-bit values is one word and no two invocations write the same word).
#include "common.glsl"
#include "kv.glsl"
layout(local_size_x = 64) in;

layout(std430, binding = 0) readonly buffer SBuf { uint SLOTS[]; };  // int64 slot ids, little-endian word pairs
layout(std430, binding = 1) readonly buffer KBuf { float KIN[]; };
layout(std430, binding = 2) readonly buffer VBuf { float VIN[]; };
layout(std430, binding = 3) writeonly buffer KcBuf { uint KC[]; };
layout(std430, binding = 4) writeonly buffer VcBuf { uint VC[]; };

layout(push_constant) uniform Push {
  uint row;      // n_kv_heads * head_dim values per token
  uint slots_off;  // in words
  uint k_off;
  uint v_off;
  uint kc_off;   // in KV elements
  uint vc_off;
  uint tok0;
} pc;

uint encode_pair(float a, float b) {
#if defined(KV_F16)
  return f32_to_f16_bits(a) | (f32_to_f16_bits(b) << 16);
#elif defined(KV_BF16)
  return f32_to_bf16_bits(a) | (f32_to_bf16_bits(b) << 16);
#else
  return 0u;
#endif
}

void main() {
  const uint p = gl_GlobalInvocationID.x;  // pair index within the row
  const uint t = pc.tok0 + gl_WorkGroupID.y;
  if (2u * p >= pc.row) return;
  const uint slot = SLOTS[pc.slots_off + 2u * t];
  const uint src = t * pc.row + 2u * p;
  const uint dst = slot * pc.row + 2u * p;
#if defined(KV_F32)
  KC[pc.kc_off + dst] = floatBitsToUint(KIN[pc.k_off + src]);
  KC[pc.kc_off + dst + 1u] = floatBitsToUint(KIN[pc.k_off + src + 1u]);
  VC[pc.vc_off + dst] = floatBitsToUint(VIN[pc.v_off + src]);
  VC[pc.vc_off + dst + 1u] = floatBitsToUint(VIN[pc.v_off + src + 1u]);
#else
  KC[(pc.kc_off + dst) >> 1] = encode_pair(KIN[pc.k_off + src], KIN[pc.k_off + src + 1u]);
  VC[(pc.vc_off + dst) >> 1] = encode_pair(VIN[pc.v_off + src], VIN[pc.v_off + src + 1u]);
#endif
}
