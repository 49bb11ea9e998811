#version 450
// out[i, :] = x[rows[i], :]; one workgroup row per output row.
layout(local_size_x = 256) in;

layout(std430, binding = 0) readonly buffer XBuf { float X[]; };
layout(std430, binding = 1) readonly buffer RBuf { int ROWS_[]; };
layout(std430, binding = 2) writeonly buffer OBuf { float O[]; };

layout(push_constant) uniform Push {
  uint dim;
  uint x_off;
  uint rows_off;
  uint out_off;
  uint tok0;
} pc;

void main() {
  const uint c = gl_GlobalInvocationID.x;
  const uint i = pc.tok0 + gl_WorkGroupID.y;
  if (c >= pc.dim) return;
  const uint r = uint(ROWS_[pc.rows_off + i]);
  O[pc.out_off + i * pc.dim + c] = X[pc.x_off + r * pc.dim + c];
}
