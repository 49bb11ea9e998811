#version 450
#if defined(STORAGE8)
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_shader_16bit_storage : require
#endif
// y[t, r] = W[r, :] . x[t, :] for TPW tokens and ROWS rows per workgroup; 32 invocations per row.
//
// The batch-invariance contract fixes the reduction order by (t, r) alone: invocation j sums, in order, the
// 32-value blocks b = j, j + 32, j + 64, ... (each block's dot a sequential fma chain over its 32 values), and the 32
// partial sums meet in a fixed tree. TPW only changes how many tokens reuse a decoded block, never the arithmetic of
// one output, so the decode (TPW 1) and prefill (TPW 8) variants agree bit for bit. `precise` keeps the driver from
// contracting or reassociating differently in the two variants. (Vulkan lets fma() round as a multiply and an add,
// lavapipe does; that changes the rounding against the reference, not the agreement between the variants, which
// run the same expression.)
layout(local_size_x = 32, local_size_y = ROWS) in;

layout(std430, binding = 0) readonly buffer WBuf { uint W[]; };
#if defined(STORAGE8)
// The same weight bytes seen as bytes and half-words (aliases of binding 0), for devices with 8/16-bit storage.
layout(std430, binding = 0) readonly buffer WBuf8 { uint8_t W8[]; };
layout(std430, binding = 0) readonly buffer WBuf16 { uint16_t W16[]; };
#endif
layout(std430, binding = 1) readonly buffer XBuf { float X[]; };
layout(std430, binding = 2) writeonly buffer YBuf { float Y[]; };

layout(push_constant) uniform Push {
  uint n_cols;      // values per row
  uint n_blocks;    // 32-value blocks per row
  uint row_bytes;
  uint n_rows;      // rows in this piece
  uint row_base;    // first piece row of this dispatch (grids are split at 65535 workgroups)
  uint y_row0;      // output column of the piece's row 0 (the piece's first row in the whole matrix)
  uint y_stride;    // rows of the whole matrix (y is [n_tokens, y_stride])
  uint x_off;       // element offsets of x and y in their bindings
  uint y_off;
  uint tok0;        // first token of this dispatch
  uint tok_end;     // one past its last token
} pc;

#include "dequant.glsl"

shared float part[TPW][ROWS][32];

void main() {
  const uint j = gl_LocalInvocationID.x;
  const uint rl = gl_LocalInvocationID.y;
  const uint row = pc.row_base + gl_WorkGroupID.x * ROWS + rl;
  const uint t0 = pc.tok0 + gl_WorkGroupID.y * TPW;
  const bool row_ok = row < pc.n_rows;

  precise float acc[TPW];
  for (uint tt = 0u; tt < TPW; ++tt) acc[tt] = 0.0;
  if (row_ok) {
    const uint rb = row * pc.row_bytes;
    for (uint b = j; b < pc.n_blocks; b += 32u) {
      float w[32];
      decode_block(rb, b, w);
      for (uint tt = 0u; tt < TPW; ++tt) {
        const uint t = t0 + tt;
        if (t < pc.tok_end) {
          const uint xb = pc.x_off + t * pc.n_cols + b * 32u;
          const uint nv = min(32u, pc.n_cols - b * 32u);  // < 32 only in a float row's last block
          precise float d = 0.0;
          for (uint i = 0u; i < nv; ++i) d = fma(w[i], X[xb + i], d);
          acc[tt] = acc[tt] + d;
        }
      }
    }
  }
  for (uint tt = 0u; tt < TPW; ++tt) part[tt][rl][j] = acc[tt];
  barrier();
  for (uint s = 16u; s > 0u; s >>= 1) {
    if (j < s) {
      for (uint tt = 0u; tt < TPW; ++tt) {
        precise float sum = part[tt][rl][j] + part[tt][rl][j + s];
        part[tt][rl][j] = sum;
      }
    }
    barrier();
  }
  if (j == 0u && row_ok) {
    for (uint tt = 0u; tt < TPW; ++tt) {
      const uint t = t0 + tt;
      if (t < pc.tok_end) Y[pc.y_off + t * pc.y_stride + pc.y_row0 + row] = part[tt][rl][0];
    }
  }
}
