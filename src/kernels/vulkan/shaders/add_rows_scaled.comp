#version 450
// Y[rows[i], :] += scales[i] * X[i, :]; one workgroup row per input row (rows are distinct within a dispatch, so no
// two invocations write one element).
layout(local_size_x = 256) in;

layout(std430, binding = 0) buffer YBuf { float Y[]; };
layout(std430, binding = 1) readonly buffer XBuf { float X[]; };
layout(std430, binding = 2) readonly buffer RBuf { int ROWS_[]; };
layout(std430, binding = 3) readonly buffer SBuf { float SCALES[]; };

layout(push_constant) uniform Push {
  uint dim;
  uint y_off;
  uint x_off;
  uint rows_off;
  uint scales_off;
  uint tok0;
} pc;

void main() {
  const uint c = gl_GlobalInvocationID.x;
  const uint i = pc.tok0 + gl_WorkGroupID.y;
  if (c >= pc.dim) return;
  const uint r = uint(ROWS_[pc.rows_off + i]);
  // precise: one rounding for the product and one for the sum on every driver (no fused multiply-add).
  precise float contribution = SCALES[pc.scales_off + i] * X[pc.x_off + i * pc.dim + c];
  precise float sum = Y[pc.y_off + r * pc.dim + c] + contribution;
  Y[pc.y_off + r * pc.dim + c] = sum;
}
