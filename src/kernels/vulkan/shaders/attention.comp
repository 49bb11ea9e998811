#version 450
// Paged causal attention, one workgroup per (token, head), for decode and prefill alike; optionally over a sliding
// window of the last positions and with soft-capped scores (gemma2).
//
// Two passes over the context in fixed chunks of 64 positions aligned to position 0, so no scratch of context size
// is needed. Pass 1 finds the softmax's max M and sum L (online: the running sum is rescaled by exp(m_old - m_new)
// per chunk). Pass 2 recomputes each score (bit for bit the same), forms p = exp(s - M) / L rounded to the KV dtype,
// as llama.cpp's F16-KV path rounds the softmax weights before they meet V, and accumulates p.V in position order.
// Invocation p scores position c0 + p (a sequential fma chain over head_dim); the chunk's max and sum meet in fixed
// trees. Every step depends only on the token's own query, position and the KV it reads, never on the other tokens
// of the call or on how the prompt was chunked.
#include "common.glsl"
#include "kv.glsl"
layout(local_size_x = 64) in;

layout(std430, binding = 0) readonly buffer QBuf { float Q[]; };
layout(std430, binding = 1) writeonly buffer OBuf { float O[]; };
layout(std430, binding = 2) readonly buffer KBuf { uint KC[]; };
layout(std430, binding = 3) readonly buffer VBuf { uint VC[]; };
layout(std430, binding = 4) readonly buffer PBuf { int POS[]; };
layout(std430, binding = 5) readonly buffer SBuf { int SEQ[]; };
layout(std430, binding = 6) readonly buffer TBuf { int BT[]; };
layout(std430, binding = 7) readonly buffer KBufS { float SINKS[]; };

layout(push_constant) uniform Push {
  uint n_heads;
  uint head_dim;
  uint group;       // query heads per KV head
  uint kv_row;      // n_kv_heads * head_dim
  uint block_size;
  uint max_blocks;  // block table row length
  float scale;
  uint q_off;
  uint o_off;
  uint kc_off;      // in KV elements
  uint vc_off;
  uint pos_off;
  uint seq_off;
  uint bt_off;
  uint tok0;
  uint window;      // > 0: attend to the last `window` positions only
  float softcap;    // > 0: s = softcap * tanh(s / softcap)
  uint has_sinks;   // SINKS[h]: a logit in the normalisation that attends to nothing (gpt-oss)
  uint sinks_off;
} pc;

const uint CHUNK = 64u;
const uint MAX_DIM = 256u;
const uint DIMS_PER_INV = MAX_DIM / CHUNK;

shared float q_s[MAX_DIM];
shared float p_s[CHUNK];
shared uint base_s[CHUNK];
shared float red[CHUNK];

// Element offset of position j's K/V row for this KV head, through the sequence's block table.
uint kv_base(uint j, uint table, uint kv_head_off) {
  const uint slot = uint(BT[table + j / pc.block_size]) * pc.block_size + j % pc.block_size;
  return slot * pc.kv_row + kv_head_off;
}

// q . K_j * scale: a sequential fma chain over head_dim (the same bits in both passes).
float score(uint j, uint table, uint kv_head_off) {
  const uint base = kv_base(j, table, kv_head_off);
  precise float dot = 0.0;
  for (uint d = 0u; d < pc.head_dim; ++d) dot = fma(q_s[d], KV_LOAD(KC, pc.kc_off + base + d), dot);
  precise float s = dot * pc.scale;
  if (pc.softcap > 0.0) s = pc.softcap * tanh(s / pc.softcap);
  return s;
}

void main() {
  const uint lid = gl_LocalInvocationID.x;
  const uint h = gl_WorkGroupID.x;
  const uint t = pc.tok0 + gl_WorkGroupID.y;
  const uint kv_head_off = (h / pc.group) * pc.head_dim;
  const uint n_ctx = uint(POS[pc.pos_off + t]) + 1u;
  // A sliding-window layer reads positions [lo, n_ctx); the chunks stay aligned to position 0.
  const uint lo = pc.window > 0u && n_ctx > pc.window ? n_ctx - pc.window : 0u;
  const uint c_start = lo / CHUNK * CHUNK;
  const uint table = pc.bt_off + uint(SEQ[pc.seq_off + t]) * pc.max_blocks;
  const uint qb = pc.q_off + (t * pc.n_heads + h) * pc.head_dim;
  for (uint d = lid; d < pc.head_dim; d += CHUNK) q_s[d] = round_like_kv(Q[qb + d]);
  barrier();

  // Pass 1: M and L (a sink starts them: M = sink, L = exp(sink - sink)).
  const bool sink = pc.has_sinks != 0u;
  float m = sink ? SINKS[pc.sinks_off + h] : 0.0;
  precise float l = sink ? 1.0 : 0.0;
  for (uint c0 = c_start; c0 < n_ctx; c0 += CHUNK) {
    const uint j = c0 + lid;
    const bool valid = j >= lo && j < n_ctx;
    const float s = valid ? score(j, table, kv_head_off) : 0.0;
    // The chunk max (every chunk holds a valid position).
    red[lid] = valid ? s : -3.0e38;
    barrier();
    for (uint k = CHUNK / 2u; k > 0u; k >>= 1) {
      if (lid < k) red[lid] = max(red[lid], red[lid + k]);
      barrier();
    }
    const bool opening = c0 == c_start && !sink;  // nothing accumulated yet
    const float m_new = opening ? red[0] : max(m, red[0]);
    const float alpha = opening ? 0.0 : exp(m - m_new);
    barrier();
    red[lid] = valid ? exp(s - m_new) : 0.0;
    barrier();
    for (uint k = CHUNK / 2u; k > 0u; k >>= 1) {
      if (lid < k) {
        precise float v = red[lid] + red[lid + k];
        red[lid] = v;
      }
      barrier();
    }
    l = l * alpha + red[0];
    m = m_new;
    barrier();  // red is rewritten by the next chunk
  }

  // Pass 2: out = sum_j round(exp(s_j - M) / L) . V_j
  precise float acc[DIMS_PER_INV];
  for (uint k = 0u; k < DIMS_PER_INV; ++k) acc[k] = 0.0;
  for (uint c0 = c_start; c0 < n_ctx; c0 += CHUNK) {
    const uint j = c0 + lid;
    if (j < n_ctx) {
      p_s[lid] = j >= lo ? round_like_kv(exp(score(j, table, kv_head_off) - m) / l) : 0.0;
      base_s[lid] = kv_base(j, table, kv_head_off);
    }
    barrier();
    const uint first = max(c0, lo) - c0;  // positions of the chunk below the window add nothing
    const uint n_here = min(CHUNK, n_ctx - c0);
    for (uint k = 0u; k < DIMS_PER_INV; ++k) {
      const uint d = lid + k * CHUNK;
      if (d < pc.head_dim) {
        precise float a = acc[k];
        for (uint i = first; i < n_here; ++i) a = fma(p_s[i], KV_LOAD(VC, pc.vc_off + base_s[i] + d), a);
        acc[k] = a;
      }
    }
    barrier();  // p_s and base_s are rewritten by the next chunk
  }
  const uint ob = pc.o_off + (t * pc.n_heads + h) * pc.head_dim;
  for (uint k = 0u; k < DIMS_PER_INV; ++k) {
    const uint d = lid + k * CHUNK;
    if (d < pc.head_dim) O[ob + d] = acc[k];
  }
}
