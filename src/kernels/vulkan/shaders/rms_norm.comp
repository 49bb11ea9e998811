#version 450
// y[t, :] = x[t, :] / sqrt(mean(x[t, :]^2) + eps) * w. One workgroup per token; the sum of squares is 256 strided
// sequential partials met in a fixed tree, so it depends on the token's own row only. y may alias x: every
// invocation rewrites only the elements it read, after the barrier that ends the reduction.
layout(local_size_x = 256) in;

layout(std430, binding = 0) readonly buffer XBuf { float X[]; };
layout(std430, binding = 1) readonly buffer WBuf { float WT[]; };
layout(std430, binding = 2) buffer YBuf { float Y[]; };

layout(push_constant) uniform Push {
  uint dim;
  uint x_off;
  uint w_off;
  uint y_off;
  float eps;
  uint tok0;
} pc;

shared float red[256];

void main() {
  const uint lid = gl_LocalInvocationID.x;
  const uint t = pc.tok0 + gl_WorkGroupID.x;
  const uint xb = pc.x_off + t * pc.dim;
  precise float s = 0.0;
  for (uint i = lid; i < pc.dim; i += 256u) s = fma(X[xb + i], X[xb + i], s);
  red[lid] = s;
  barrier();
  for (uint k = 128u; k > 0u; k >>= 1) {
    if (lid < k) {
      precise float v = red[lid] + red[lid + k];
      red[lid] = v;
    }
    barrier();
  }
  const float scale = 1.0 / sqrt(red[0] / float(pc.dim) + pc.eps);
  const uint yb = pc.y_off + t * pc.dim;
  for (uint i = lid; i < pc.dim; i += 256u) {
    precise float v = X[xb + i] * scale * WT[pc.w_off + i];
    Y[yb + i] = v;
  }
}
