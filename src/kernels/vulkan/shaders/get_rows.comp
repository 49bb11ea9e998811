#version 450
#if defined(STORAGE8)
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_shader_16bit_storage : require
#endif
// out[t, :] = dequant(row ids[t]) for the ids that fall in this piece of the table; one invocation per 32-value
// block, one workgroup row per token.
layout(local_size_x = 64) in;

layout(std430, binding = 0) readonly buffer WBuf { uint W[]; };
#if defined(STORAGE8)
// The same weight bytes seen as bytes and half-words (aliases of binding 0), for devices with 8/16-bit storage.
layout(std430, binding = 0) readonly buffer WBuf8 { uint8_t W8[]; };
layout(std430, binding = 0) readonly buffer WBuf16 { uint16_t W16[]; };
#endif
layout(std430, binding = 1) readonly buffer IdBuf { int IDS[]; };
layout(std430, binding = 2) writeonly buffer OBuf { float O[]; };

layout(push_constant) uniform Push {
  uint n_cols;
  uint n_blocks;
  uint row_bytes;
  uint first_row;  // table row of the piece's row 0
  uint n_rows;     // rows in this piece
  uint ids_off;
  uint out_off;
  uint tok0;
} pc;

#include "dequant.glsl"

void main() {
  const uint b = gl_GlobalInvocationID.x;
  const uint t = pc.tok0 + gl_WorkGroupID.y;
  if (b >= pc.n_blocks) return;
  const uint id = uint(IDS[pc.ids_off + t]);
  if (id < pc.first_row || id >= pc.first_row + pc.n_rows) return;
  float v[32];
  decode_block((id - pc.first_row) * pc.row_bytes, b, v);
  const uint o = pc.out_off + t * pc.n_cols + b * 32u;
  const uint nv = min(32u, pc.n_cols - b * 32u);  // < 32 only in a float row's last block
  for (uint i = 0u; i < nv; ++i) O[o + i] = v[i];
}
