#version 450
// Streams a buffer: invocation g reads 16-byte words g, g + G, g + 2G, ... (G invocations in all, so each pass over
// the grid reads one contiguous span) and folds them; one value per workgroup is written so the reads are live.
layout(local_size_x = 256) in;

layout(std430, binding = 0) readonly buffer DBuf { uvec4 D[]; };
layout(std430, binding = 1) writeonly buffer OBuf { uint O[]; };

layout(push_constant) uniform Push {
  uint n_vec4;
} pc;

shared uint red[256];

void main() {
  const uint lid = gl_LocalInvocationID.x;
  const uint stride = gl_NumWorkGroups.x * 256u;
  uvec4 acc = uvec4(0u);
  for (uint i = gl_GlobalInvocationID.x; i < pc.n_vec4; i += stride) acc += D[i];
  red[lid] = acc.x ^ acc.y ^ acc.z ^ acc.w;
  barrier();
  for (uint k = 128u; k > 0u; k >>= 1) {
    if (lid < k) red[lid] ^= red[lid + k];
    barrier();
  }
  if (lid == 0u) O[gl_WorkGroupID.x] = red[0];
}
