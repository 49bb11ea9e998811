#pragma once
// AVX-512 decoding of the GGUF block layouts into unsigned byte vectors in element order, shared by the GEMV
// kernels (which feed them to vpdpbusd directly) and the GEMM weight unpacking. Include only from files compiled
// with AVX-512 flags; everything has internal linkage.
#include <immintrin.h>

#include <cstdint>
#include <cstring>

namespace kairo::kernels::avx512 {
namespace {

inline uint32_t load_u16(const uint8_t* p) {
  uint16_t v;
  std::memcpy(&v, p, 2);
  return v;
}
inline uint32_t load_u32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
// The 4 bytes at p in every 32-bit lane, straight from memory (a load-port broadcast: no shuffle-port uop, which
// the vpdpbusd loops of the GEMV kernels are short of).
inline __m512i broadcast4(const void* p) { return _mm512_broadcastd_epi32(_mm_loadu_si32(p)); }

inline float half_at(const uint8_t* p) { return _cvtsh_ss(static_cast<unsigned short>(load_u16(p))); }

// 16 f16 values at p (one per row of a row tile) as floats.
inline __m512 half16_ps(const uint8_t* p) {
  return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}
// 16 bytes at p (one per row of a row tile), unsigned or signed, as floats.
template <bool kSigned>
inline __m512 bytes16_ps(const uint8_t* p) {
  const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  return _mm512_cvtepi32_ps(kSigned ? _mm512_cvtepi8_epi32(x) : _mm512_cvtepu8_epi32(x));
}

// MXFP4 row tiles: 16 E8M0 scale bytes at p (one per row) as the floats 2^(e - 128), exactly mxfp4_scale's
// (e = 0 and 1 give the subnormals 2^-128 and 2^-127).
inline __m512 e8m0_half16_ps(const uint8_t* p) {
  const __m512i e = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  const __m512i normal = _mm512_slli_epi32(_mm512_sub_epi32(e, _mm512_set1_epi32(1)), 23);
  const __m512i subnormal = _mm512_sllv_epi32(_mm512_set1_epi32(0x00200000), e);
  const __mmask16 is_normal = _mm512_cmpge_epu32_mask(e, _mm512_set1_epi32(2));
  return _mm512_castsi512_ps(_mm512_mask_blend_epi32(is_normal, subnormal, normal));
}

// vpshufb table from an MXFP4 code (a nibble) to its doubled E2M1 value + 12 (cpu::kMxfp4ZeroPoint), unsigned
// (0..24) for vpdpbusd; the kernels start each block's dot at ActQ8::zero_point_mxfp4 to take the 12 back out.
inline __m512i mxfp4_value_table() {
  return _mm512_broadcast_i32x4(_mm_setr_epi8(12, 13, 14, 15, 16, 18, 20, 24, 12, 11, 10, 9, 8, 6, 4, 0));
}

// [a x8, b x8] from two halves (b may be absent: 0).
inline __m512 half_pair_lanes(const uint8_t* pa, const uint8_t* pb) {
  const uint32_t v = load_u16(pa) | (pb != nullptr ? load_u16(pb) << 16 : 0u);
  const __m128 f = _mm_cvtph_ps(_mm_cvtsi32_si128(static_cast<int>(v)));
  const __m512i idx = _mm512_set_epi32(1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0);
  return _mm512_permutexvar_ps(idx, _mm512_castps128_ps512(f));
}

// Two halves as floats in lanes 0 and 1 of an xmm (b absent: 0).
inline __m128 half_pair(const uint8_t* pa, const uint8_t* pb) {
  const uint32_t v = load_u16(pa) | (pb != nullptr ? load_u16(pb) << 16 : 0u);
  return _mm_cvtph_ps(_mm_cvtsi32_si128(static_cast<int>(v)));
}

// Nibbles of two legacy blocks' 16-byte qs (b absent: zeros) in element order [lo a, hi a, lo b, hi b].
inline __m512i nibbles_pair(const uint8_t* qa, const uint8_t* qb) {
  const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(qa));
  const __m128i b = qb != nullptr ? _mm_loadu_si128(reinterpret_cast<const __m128i*>(qb)) : _mm_setzero_si128();
  const __m256i x = _mm256_set_m128i(b, a);
  const __m256i m4 = _mm256_set1_epi8(0x0F);
  const __m256i lo = _mm256_and_si256(x, m4);
  const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(x, 4), m4);
  const __m512i z = _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);  // [lo a, lo b, hi a, hi b]
  return _mm512_shuffle_i64x2(z, z, _MM_SHUFFLE(3, 1, 2, 0));
}

// The 5th bits of two Q5 blocks (qh: bit i = element i) set as 0x10 in w.
inline __m512i add_fifth_bits(__m512i w, const uint8_t* qha, const uint8_t* qhb) {
  const uint64_t bits = load_u32(qha) | (qhb != nullptr ? static_cast<uint64_t>(load_u32(qhb)) << 32 : 0u);
  return _mm512_mask_add_epi8(w, bits, w, _mm512_set1_epi8(0x10));
}

// Legacy block types: weights of two blocks as u8 (value = stored q), the zero point (8, 16, 128 or none) as a
// shift (offset = 1 << kShift), and where the scale / min halves live.
struct LegacyQ4_0 {
  static constexpr int kBytes = 18, kShift = 3;
  static constexpr bool kMin = false;
  static __m512i weights(const uint8_t* a, const uint8_t* b) { return nibbles_pair(a + 2, b ? b + 2 : nullptr); }
};
struct LegacyQ4_1 {
  static constexpr int kBytes = 20, kShift = -1;
  static constexpr bool kMin = true;
  static __m512i weights(const uint8_t* a, const uint8_t* b) { return nibbles_pair(a + 4, b ? b + 4 : nullptr); }
};
struct LegacyQ5_0 {
  static constexpr int kBytes = 22, kShift = 4;
  static constexpr bool kMin = false;
  static __m512i weights(const uint8_t* a, const uint8_t* b) {
    return add_fifth_bits(nibbles_pair(a + 6, b ? b + 6 : nullptr), a + 2, b ? b + 2 : nullptr);
  }
};
struct LegacyQ5_1 {
  static constexpr int kBytes = 24, kShift = -1;
  static constexpr bool kMin = true;
  static __m512i weights(const uint8_t* a, const uint8_t* b) {
    return add_fifth_bits(nibbles_pair(a + 8, b ? b + 8 : nullptr), a + 4, b ? b + 4 : nullptr);
  }
};
struct LegacyQ8_0 {
  static constexpr int kBytes = 34, kShift = 7;
  static constexpr bool kMin = false;
  static __m512i weights(const uint8_t* a, const uint8_t* b) {
    const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + 2));
    const __m256i y = b ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + 2)) : _mm256_setzero_si256();
    // int8 q -> u8 q + 128 (the padding half stays 0 and is scaled by 0).
    const __m512i z = _mm512_inserti64x4(_mm512_castsi256_si512(x), y, 1);
    return _mm512_xor_si512(z, _mm512_set1_epi8(static_cast<char>(0x80)));
  }
};

// Q4_K / Q5_K: the 8 six-bit scales and mins of a super-block as 16 bytes [sc0..7, m0..7]. Sub-blocks 0-3 keep
// theirs in the low 6 bits of bytes j (scale) and j+4 (min); 4-7 combine a nibble of byte j+4 with the top 2 bits
// of bytes j-4 (scale) / j (min). Reads 16 bytes: the 4 past the scales are the block's own next field.
inline __m128i k4_scales_mins(const uint8_t* scales) {
  const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(scales));
  const __m128i a = _mm_shuffle_epi8(b, _mm_setr_epi8(0, 1, 2, 3, 8, 9, 10, 11, 4, 5, 6, 7, 8, 9, 10, 11));
  const __m128i top = _mm_shuffle_epi8(b, _mm_setr_epi8(-1, -1, -1, -1, 0, 1, 2, 3, -1, -1, -1, -1, 4, 5, 6, 7));
  const __m128i a_hi = _mm_and_si128(_mm_srli_epi16(a, 4), _mm_set1_epi8(0x0F));
  const __m128i low = _mm_and_si128(_mm_mask_blend_epi8(0xF000, a, a_hi),
                                    _mm_setr_epi8(63, 63, 63, 63, 15, 15, 15, 15, 63, 63, 63, 63, 15, 15, 15, 15));
  const __m128i high = _mm_and_si128(_mm_srli_epi16(top, 2), _mm_set1_epi8(0x30));  // top 2 bits -> bits 4-5
  return _mm_or_si128(low, high);
}

// Q4_K/Q5_K super-block: [d*sc_j (8), dmin*m_j (8)] as floats.
inline __m512 k4_scale_min_floats(const uint8_t* block) {
  const __m512 sm = _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(k4_scales_mins(block + 4)));
  return _mm512_mul_ps(sm, half_pair_lanes(block, block + 2));
}

// 128 values (chunks k, k+1 for even k) of a Q4_K/Q5_K super-block from one 64-byte load.
inline void k4_chunk_pair(const uint8_t* qs, int k, __m512i* first, __m512i* second) {
  const __m512i z = _mm512_loadu_si512(qs + 32 * k);
  const __m512i m4 = _mm512_set1_epi8(0x0F);
  const __m512i lo = _mm512_and_si512(z, m4);
  const __m512i hi = _mm512_and_si512(_mm512_srli_epi16(z, 4), m4);
  *first = _mm512_shuffle_i64x2(lo, hi, 0x44);   // [lo of bytes 0-31, hi of bytes 0-31]
  *second = _mm512_shuffle_i64x2(lo, hi, 0xEE);  // [lo of bytes 32-63, hi of bytes 32-63]
}

// 64 values (chunk k = sub-blocks 2k, 2k+1) of a Q4_K/Q5_K super-block. qs: the block's 128 nibble bytes; hq:
// for Q5_K the 32 qh bytes broadcast to both halves of a vector.
inline __m512i k4_chunk(const uint8_t* qs, int k) {
  const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qs + 32 * k));
  const __m256i m4 = _mm256_set1_epi8(0x0F);
  return _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_and_si256(x, m4)),
                            _mm256_and_si256(_mm256_srli_epi16(x, 4), m4), 1);
}
inline __m512i k5_high_bits(__m512i w, __m512i hq, int k) {
  const __m512i bits = _mm512_inserti64x4(_mm512_set1_epi8(static_cast<char>(1 << (2 * k))),
                                          _mm256_set1_epi8(static_cast<char>(1 << (2 * k + 1))), 1);
  return _mm512_mask_add_epi8(w, _mm512_test_epi8_mask(hq, bits), w, _mm512_set1_epi8(0x10));
}
inline __m512i broadcast_32_bytes(const uint8_t* p) {
  return _mm512_broadcast_i64x4(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}

// Q6_K: the 64 values of chunk c (0..3) as u8 0..63 (value = stored q; the zero point is 32).
inline __m512i q6k_chunk(const uint8_t* block, int c) {
  const int half = c / 2;
  const __m512i z = _mm512_loadu_si512(block + 64 * half);  // ql
  const __m512i hq = broadcast_32_bytes(block + 128 + 32 * half);
  const __m512i m4 = _mm512_set1_epi8(0x0F);
  const __m512i m30 = _mm512_set1_epi8(0x30);
  __m512i nib, hb;
  if ((c & 1) == 0) {
    nib = _mm512_and_si512(z, m4);
    // bits 0-1 (first 32 values) and 2-3 (next 32) of qh, moved to bits 4-5.
    const __m512i sh = _mm512_inserti64x4(_mm512_set1_epi16(4), _mm256_set1_epi16(2), 1);
    hb = _mm512_and_si512(_mm512_sllv_epi16(hq, sh), m30);
  } else {
    nib = _mm512_and_si512(_mm512_srli_epi16(z, 4), m4);
    const __m512i sh = _mm512_inserti64x4(_mm512_set1_epi16(0), _mm256_set1_epi16(2), 1);
    hb = _mm512_and_si512(_mm512_srlv_epi16(hq, sh), m30);
  }
  return _mm512_or_si512(nib, hb);
}

// Q6_K: the 16 sub-block scales times d as floats.
inline __m512 q6k_scales(const uint8_t* block) {
  const __m128i sc = _mm_loadu_si128(reinterpret_cast<const __m128i*>(block + 192));
  return _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(sc)), _mm512_set1_ps(half_at(block + 208)));
}

// out[c] lane r = in[r] lane c: a 16x16 float transpose (the GEMM tiles accumulate rows x tokens, y is tokens x
// rows; the GEMV finisher turns per-row block vectors into per-block row vectors).
inline void transpose_16x16(const __m512* in, __m512* out) {
  __m512 t[16], r[16];
  for (int i = 0; i < 8; ++i) {
    t[2 * i] = _mm512_unpacklo_ps(in[2 * i], in[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_ps(in[2 * i], in[2 * i + 1]);
  }
  for (int i = 0; i < 4; ++i) {
    const __m512d a = _mm512_castps_pd(t[4 * i]), b = _mm512_castps_pd(t[4 * i + 2]);
    const __m512d c = _mm512_castps_pd(t[4 * i + 1]), d = _mm512_castps_pd(t[4 * i + 3]);
    // r[4i + k], 128-bit lane L: column 4L + k of rows 4i .. 4i+3
    r[4 * i] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, b));
    r[4 * i + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, b));
    r[4 * i + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(c, d));
    r[4 * i + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(c, d));
  }
  for (int k = 0; k < 4; ++k) {
    const __m512 s1 = _mm512_shuffle_f32x4(r[k], r[4 + k], 0x44);
    const __m512 s2 = _mm512_shuffle_f32x4(r[8 + k], r[12 + k], 0x44);
    const __m512 s3 = _mm512_shuffle_f32x4(r[k], r[4 + k], 0xEE);
    const __m512 s4 = _mm512_shuffle_f32x4(r[8 + k], r[12 + k], 0xEE);
    out[k] = _mm512_shuffle_f32x4(s1, s2, 0x88);
    out[4 + k] = _mm512_shuffle_f32x4(s1, s2, 0xDD);
    out[8 + k] = _mm512_shuffle_f32x4(s3, s4, 0x88);
    out[12 + k] = _mm512_shuffle_f32x4(s3, s4, 0xDD);
  }
}

// out[16 * c + r] = rows[r][c].
inline void store_transposed_16x16(const __m512* rows, float* out) {
  __m512 t[16];
  transpose_16x16(rows, t);
  for (int c = 0; c < 16; ++c) _mm512_storeu_ps(out + 16 * c, t[c]);
}

// Deterministic reduction (batch invariance): a sum of 16 partial sums x_0..x_15 always uses this one tree,
//   ((S_0 + S_1) + (S_2 + S_3)),  S_L = (x_4L + x_4L+2) + (x_4L+1 + x_4L+3),
// whether the 16 values are the lanes of one vector (GEMV: sum_lanes16, 16 vectors at once) or 16 vectors summed
// lane by lane (GEMM: tree_sum16). Both must stay the same tree, or one token's result would depend on the batch.
inline __m512 tree_sum16(const __m512* x) {
  __m512 s[4];
  for (int l = 0; l < 4; ++l)
    s[l] = _mm512_add_ps(_mm512_add_ps(x[4 * l], x[4 * l + 2]), _mm512_add_ps(x[4 * l + 1], x[4 * l + 3]));
  return _mm512_add_ps(_mm512_add_ps(s[0], s[1]), _mm512_add_ps(s[2], s[3]));
}

// Lane i of the result = the tree above over the 16 lanes of v[i].
inline __m512 sum_lanes16(const __m512* v) {
  __m512 s[8], t[4];
  for (int i = 0; i < 8; ++i)  // lanes 4L+k: (x_4L + x_4L+2), (x_4L+1 + x_4L+3) of v[2i] and v[2i+1]
    s[i] = _mm512_add_ps(_mm512_unpacklo_ps(v[2 * i], v[2 * i + 1]), _mm512_unpackhi_ps(v[2 * i], v[2 * i + 1]));
  for (int i = 0; i < 4; ++i) {  // S_L of four vectors per 128-bit lane
    const __m512d a = _mm512_castps_pd(s[2 * i]), b = _mm512_castps_pd(s[2 * i + 1]);
    t[i] = _mm512_add_ps(_mm512_castpd_ps(_mm512_unpacklo_pd(a, b)), _mm512_castpd_ps(_mm512_unpackhi_pd(a, b)));
  }
  const __m512 u = _mm512_add_ps(_mm512_shuffle_f32x4(t[0], t[1], 0x88), _mm512_shuffle_f32x4(t[0], t[1], 0xDD));
  const __m512 w = _mm512_add_ps(_mm512_shuffle_f32x4(t[2], t[3], 0x88), _mm512_shuffle_f32x4(t[2], t[3], 0xDD));
  return _mm512_add_ps(_mm512_shuffle_f32x4(u, w, 0x88), _mm512_shuffle_f32x4(u, w, 0xDD));
}

// Integer lane sums (exact, so any order): lane 4L + k of the result = the sum of 128-bit lane L of v[k].
inline __m512i hsum_128lanes4(__m512i v0, __m512i v1, __m512i v2, __m512i v3) {
  const __m512i a = _mm512_add_epi32(_mm512_unpacklo_epi32(v0, v1), _mm512_unpackhi_epi32(v0, v1));
  const __m512i b = _mm512_add_epi32(_mm512_unpacklo_epi32(v2, v3), _mm512_unpackhi_epi32(v2, v3));
  return _mm512_add_epi32(_mm512_unpacklo_epi64(a, b), _mm512_unpackhi_epi64(a, b));
}

// 16 block sums from 8 vectors whose lanes 0-7 belong to block 2k and 8-15 to block 2k+1 (v[k]), given as
// lo = hsum_128lanes4(v[0..3]) and hi = hsum_128lanes4(v[4..7]). Lane j of the result = block j.
inline __m512i block_sums_8lane(__m512i lo, __m512i hi) {
  const __m512i c = _mm512_add_epi32(_mm512_shuffle_i32x4(lo, hi, 0x88), _mm512_shuffle_i32x4(lo, hi, 0xDD));
  // c: [blocks 0 2 4 6, 1 3 5 7, 8 10 12 14, 9 11 13 15]
  return _mm512_permutexvar_epi32(_mm512_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7, 8, 12, 9, 13, 10, 14, 11, 15), c);
}

// 16 block sums from 4 vectors whose lanes 4q..4q+3 belong to block 4c + q (v[c]): lane j of the result = block j.
inline __m512i block_sums_4lane(__m512i v0, __m512i v1, __m512i v2, __m512i v3) {
  const __m512i h = hsum_128lanes4(v0, v1, v2, v3);  // lane 4q + c: block 4c + q
  return _mm512_permutexvar_epi32(_mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15), h);
}

// v[k] lane j = dwords k of block j (16 blocks x 8 dwords, k-major) -> out[m] = [block 2m... ] as two 256-bit
// halves per vector: out[j] = [block j, block 4 + j], out[4 + j] = [block 8 + j, block 12 + j] (j = 0..3).
inline void transpose_8x16_dwords(const __m512i* v, __m512i* out) {
  __m512i lo[4], hi[4], x[2][4];
  for (int i = 0; i < 4; ++i) {
    lo[i] = _mm512_unpacklo_epi32(v[2 * i], v[2 * i + 1]);
    hi[i] = _mm512_unpackhi_epi32(v[2 * i], v[2 * i + 1]);
  }
  for (int q = 0; q < 2; ++q) {  // x[q][j], 128-bit lane L: dwords 4q..4q+3 of block 4L + j
    x[q][0] = _mm512_unpacklo_epi64(lo[2 * q], lo[2 * q + 1]);
    x[q][1] = _mm512_unpackhi_epi64(lo[2 * q], lo[2 * q + 1]);
    x[q][2] = _mm512_unpacklo_epi64(hi[2 * q], hi[2 * q + 1]);
    x[q][3] = _mm512_unpackhi_epi64(hi[2 * q], hi[2 * q + 1]);
  }
  for (int j = 0; j < 4; ++j) {
    const __m512i a = _mm512_shuffle_i32x4(x[0][j], x[1][j], _MM_SHUFFLE(1, 0, 1, 0));
    const __m512i b = _mm512_shuffle_i32x4(x[0][j], x[1][j], _MM_SHUFFLE(3, 2, 3, 2));
    out[j] = _mm512_shuffle_i32x4(a, a, _MM_SHUFFLE(3, 1, 2, 0));
    out[4 + j] = _mm512_shuffle_i32x4(b, b, _MM_SHUFFLE(3, 1, 2, 0));
  }
}

// Row-tile blocks (Packing in quant_matmul.h): 8 groups of 4 values for 16 rows, v[g] = [16 rows][4] bytes.
// 4-bit tiles (Q4_0, Q4_K) keep groups 2s and 2s + 1 in the low and high nibbles of bytes [64 s, 64 s + 64).
inline void row_tile_nibbles(const uint8_t* blk, __m512i v[8]) {
  const __m512i m4 = _mm512_set1_epi8(0x0F);
  for (int s = 0; s < 4; ++s) {
    const __m512i z = _mm512_loadu_si512(blk + 64 * s);
    v[2 * s] = _mm512_and_si512(z, m4);
    v[2 * s + 1] = _mm512_and_si512(_mm512_srli_epi16(z, 4), m4);
  }
}

// A Q4_0 (kQ4) or Q8_0 row-tile block as signed values: the stored unsigned values minus their zero point (8, or
// 128 by flipping the top bit).
template <bool kQ4>
inline void row_tile_signed(const uint8_t* blk, __m512i v[8]) {
  if constexpr (kQ4) {
    row_tile_nibbles(blk, v);
    for (int k = 0; k < 8; ++k) v[k] = _mm512_sub_epi8(v[k], _mm512_set1_epi8(8));
  } else {
    for (int k = 0; k < 8; ++k)
      v[k] = _mm512_xor_si512(_mm512_loadu_si512(blk + 64 * k), _mm512_set1_epi8(static_cast<char>(0x80)));
  }
}

// A Q6_K row-tile sub-block of 16 values (192 bytes: two nibble planes, then the high bit pairs), as 4 vectors of
// [16 rows][4] unsigned values (stored value + 32): values 4k..4k+3 are a nibble with its two high bits moved to
// bits 4-5 (ternary 0xEC = (A & C) | B with C = 0x0F).
inline void q6_k_row_tile_values(const uint8_t* v, __m512i q[4]) {
  const __m512i m4 = _mm512_set1_epi8(0x0F);
  const __m512i m30 = _mm512_set1_epi8(0x30);
  const __m512i n0 = _mm512_loadu_si512(v);
  const __m512i n1 = _mm512_loadu_si512(v + 64);
  const __m512i h = _mm512_loadu_si512(v + 128);
  q[0] = _mm512_ternarylogic_epi32(n0, _mm512_and_si512(_mm512_slli_epi16(h, 4), m30), m4, 0xEC);
  q[1] = _mm512_ternarylogic_epi32(_mm512_srli_epi16(n0, 4), _mm512_and_si512(_mm512_slli_epi16(h, 2), m30), m4, 0xEC);
  q[2] = _mm512_ternarylogic_epi32(n1, _mm512_and_si512(h, m30), m4, 0xEC);
  q[3] = _mm512_ternarylogic_epi32(_mm512_srli_epi16(n1, 4), _mm512_and_si512(_mm512_srli_epi16(h, 2), m30), m4, 0xEC);
}

}  // namespace
}  // namespace kairo::kernels::avx512
