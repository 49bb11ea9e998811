// Decoding of one 32-value block of a weight row, for the weight type chosen by a WTYPE_* define. The includer
// declares `W`, a readonly uint[] storage buffer holding whole rows (GGUF layout), and `pc.n_cols`: a float row's
// last block may be partial (the demo model's FFN is 172 wide), and its values past the row's end are 0. Bytes are read from 32-bit words
// with shifts so no 8/16-bit storage feature is needed. Every block field sits at an even byte offset (block sizes
// and field offsets are even), so 16-bit reads never straddle words and 32-bit reads straddle at most two; MXFP4's
// 17-byte blocks are the exception and are read byte by byte.
//
// The values are assigned through `precise` temporaries: the driver may then not fuse d * q - m differently in the
// matmul variants (tokens per workgroup 1 and 8) that must agree bit for bit.

#if defined(STORAGE8)
// Direct byte and half-word loads (STORAGE8 variants: the includer aliases W as W8 / W16). Same values.
uint rd16(uint a) { return uint(W16[a >> 1]); }
uint rd8(uint a) { return uint(W8[a]); }
#else
uint rd16(uint a) { return (W[a >> 2] >> ((a & 2u) << 3)) & 0xffffu; }
uint rd8(uint a) { return (W[a >> 2] >> ((a & 3u) << 3)) & 0xffu; }
#endif
uint rd32(uint a) { return (a & 2u) == 0u ? W[a >> 2] : ((W[a >> 2] >> 16) | (W[(a >> 2) + 1u] << 16)); }
float rdf16(uint a) { return unpackHalf2x16(rd16(a)).x; }

// Sub-block j (0..7) scale and min of Q4_K/Q5_K from the 12 packed bytes at `s` (see tensor/blocks.h).
void scale_min_k4(uint s, uint j, out float sc, out float mn) {
  if (j < 4u) {
    sc = float(rd8(s + j) & 63u);
    mn = float(rd8(s + j + 4u) & 63u);
  } else {
    sc = float((rd8(s + j + 4u) & 15u) | ((rd8(s + j - 4u) >> 6) << 4));
    mn = float((rd8(s + j + 4u) >> 4) | ((rd8(s + j) >> 6) << 4));
  }
}

// v = block b (values 32b .. 32b+31) of the row starting at byte rb.
void decode_block(uint rb, uint b, out float v[32]) {
#if defined(WTYPE_F32)
  uint base = (rb >> 2) + b * 32u;
  uint n = min(32u, pc.n_cols - b * 32u);
  for (uint i = 0u; i < 32u; ++i) v[i] = i < n ? uintBitsToFloat(W[base + i]) : 0.0;
#elif defined(WTYPE_F16)
  uint base = (rb >> 2) + b * 16u;
  uint n = min(32u, pc.n_cols - b * 32u);  // even: rows start on 4-byte boundaries (checked at upload)
  for (uint i = 0u; i < 16u; ++i) {
    vec2 h = 2u * i < n ? unpackHalf2x16(W[base + i]) : vec2(0.0);
    v[2u * i] = h.x;
    v[2u * i + 1u] = h.y;
  }
#elif defined(WTYPE_BF16)
  uint base = (rb >> 2) + b * 16u;
  uint n = min(32u, pc.n_cols - b * 32u);
  for (uint i = 0u; i < 16u; ++i) {
    uint u = 2u * i < n ? W[base + i] : 0u;
    v[2u * i] = uintBitsToFloat(u << 16);
    v[2u * i + 1u] = uintBitsToFloat(u & 0xffff0000u);
  }
#elif defined(WTYPE_Q8_0)
  uint a = rb + b * 34u;
  float d = rdf16(a);
  for (uint i = 0u; i < 16u; ++i) {
    uint u = rd16(a + 2u + 2u * i);
    precise float x0 = d * float(int(u << 24) >> 24);
    precise float x1 = d * float(int(u << 16) >> 24);
    v[2u * i] = x0;
    v[2u * i + 1u] = x1;
  }
#elif defined(WTYPE_Q4_0) || defined(WTYPE_Q4_1)
#if defined(WTYPE_Q4_0)
  uint a = rb + b * 18u;
  uint qs = a + 2u;
  float d = rdf16(a);
#else
  uint a = rb + b * 20u;
  uint qs = a + 4u;
  float d = rdf16(a);
  float m = rdf16(a + 2u);
#endif
  for (uint i = 0u; i < 4u; ++i) {
    uint u = rd32(qs + 4u * i);
    for (uint k = 0u; k < 4u; ++k) {
      uint byte = (u >> (8u * k)) & 0xffu;
#if defined(WTYPE_Q4_0)
      precise float lo = d * float(int(byte & 15u) - 8);
      precise float hi = d * float(int(byte >> 4) - 8);
#else
      precise float lo = d * float(byte & 15u) + m;
      precise float hi = d * float(byte >> 4) + m;
#endif
      v[4u * i + k] = lo;
      v[4u * i + k + 16u] = hi;
    }
  }
#elif defined(WTYPE_Q5_0) || defined(WTYPE_Q5_1)
#if defined(WTYPE_Q5_0)
  uint a = rb + b * 22u;
  float d = rdf16(a);
  uint qh = rd32(a + 2u);
  uint qs = a + 6u;
#else
  uint a = rb + b * 24u;
  float d = rdf16(a);
  float m = rdf16(a + 2u);
  uint qh = rd32(a + 4u);
  uint qs = a + 8u;
#endif
  for (uint i = 0u; i < 4u; ++i) {
    uint u = rd32(qs + 4u * i);
    for (uint k = 0u; k < 4u; ++k) {
      uint j = 4u * i + k;
      uint byte = (u >> (8u * k)) & 0xffu;
      uint q0 = (byte & 15u) | (((qh >> j) & 1u) << 4);
      uint q1 = (byte >> 4) | (((qh >> (j + 16u)) & 1u) << 4);
#if defined(WTYPE_Q5_0)
      precise float lo = d * float(int(q0) - 16);
      precise float hi = d * float(int(q1) - 16);
#else
      precise float lo = d * float(q0) + m;
      precise float hi = d * float(q1) + m;
#endif
      v[j] = lo;
      v[j + 16u] = hi;
    }
  }
#elif defined(WTYPE_Q4_K) || defined(WTYPE_Q5_K)
  // A 256-value super-block is 8 of our 32-value blocks (sub-blocks j = b % 8).
  uint j = b & 7u;
#if defined(WTYPE_Q4_K)
  uint a = rb + (b >> 3) * 144u;
  uint qs = a + 16u + 32u * (j >> 1);
#else
  uint a = rb + (b >> 3) * 176u;
  uint qh = a + 16u;
  uint qs = a + 48u + 32u * (j >> 1);
#endif
  float sc, mn;
  scale_min_k4(a + 4u, j, sc, mn);
  precise float d1 = rdf16(a) * sc;
  precise float m1 = rdf16(a + 2u) * mn;
  uint shift = (j & 1u) * 4u;
  for (uint i = 0u; i < 8u; ++i) {
    uint u = rd32(qs + 4u * i);
#if defined(WTYPE_Q5_K)
    uint h = rd32(qh + 4u * i);
#endif
    for (uint k = 0u; k < 4u; ++k) {
      uint q = (u >> (8u * k + shift)) & 15u;
#if defined(WTYPE_Q5_K)
      q += ((h >> (8u * k + j)) & 1u) << 4;
#endif
      precise float x = d1 * float(q) - m1;
      v[4u * i + k] = x;
    }
  }
#elif defined(WTYPE_Q6_K)
  // Block b % 8 of the super-block: half hf = (b%8)/4 (128 values), quarter k; value l < 32 takes its low nibble
  // from ql[64 hf + l + 32 (k & 1)] (high nibble when k >= 2), its top 2 bits from qh[32 hf + l] >> 2k, and the
  // int8 scale 8 hf + 2k + l / 16.
  uint jb = b & 7u;
  uint hf = jb >> 2;
  uint k = jb & 3u;
  uint a = rb + (b >> 3) * 210u;
  float d = rdf16(a + 208u);
  uint ql = a + 64u * hf + 32u * (k & 1u);
  uint qh = a + 128u + 32u * hf;
  uint sc_addr = a + 192u + 8u * hf + 2u * k;
  precise float ds0 = d * float(int(rd8(sc_addr) << 24) >> 24);
  precise float ds1 = d * float(int(rd8(sc_addr + 1u) << 24) >> 24);
  uint lshift = (k >> 1) * 4u;
  for (uint i = 0u; i < 8u; ++i) {
    uint lo = rd32(ql + 4u * i);
    uint hi = rd32(qh + 4u * i);
    for (uint e = 0u; e < 4u; ++e) {
      uint l = 4u * i + e;
      uint q = ((lo >> (8u * e + lshift)) & 15u) | (((hi >> (8u * e + 2u * k)) & 3u) << 4);
      precise float x = (l < 16u ? ds0 : ds1) * float(int(q) - 32);
      v[l] = x;
    }
  }
#elif defined(WTYPE_MXFP4)
  // 17-byte blocks (E8M0 scale byte, then 16 bytes of code nibbles as Q4_0's): blocks start at any byte, so only
  // byte reads. The value is the doubled E2M1 value of the code times 2^(e - 128) (tensor/blocks.h), exact.
  const int kValues[16] = int[16](0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12);
  uint a = rb + b * 17u;
  uint e = rd8(a);
  float d = uintBitsToFloat(e < 2u ? (0x00200000u << e) : ((e - 1u) << 23));
  for (uint i = 0u; i < 16u; ++i) {
    uint byte = rd8(a + 1u + i);
    precise float lo = d * float(kValues[byte & 15u]);
    precise float hi = d * float(kValues[byte >> 4]);
    v[i] = lo;
    v[i + 16u] = hi;
  }
#else
#error "define one WTYPE_*"
#endif
}
