// Activation quantization with AVX2 for the row-tile kernels: per block of 32, scale = max|x| / 127,
// q = round-to-nearest-even(x / scale), and the block's float sum added in the order of the AVX-512 quantizer
// (GCC's _mm512_reduce_add_ps over x[0..16) + x[16..32)), so both ISAs give every token the same bits.
#include <immintrin.h>

#include <cstring>

#include "kernels/cpu/act_quant.h"

namespace kairo::kernels::avx2 {
namespace {

inline float hmax8(__m256 v) {
  __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  m = _mm_max_ps(m, _mm_movehl_ps(m, m));
  m = _mm_max_ss(m, _mm_movehdup_ps(m));
  return _mm_cvtss_f32(m);
}

// v[i] = x[i] + x[16 + i]; then (v[8..16) + v[0..8)), its halves, then lanes (0 + 2, 1 + 3), then their sum.
inline float block_sum(const __m256* x) {
  const __m256 v_lo = _mm256_add_ps(x[0], x[2]), v_hi = _mm256_add_ps(x[1], x[3]);
  const __m256 t3 = _mm256_add_ps(v_hi, v_lo);
  const __m128 t6 = _mm_add_ps(_mm256_extractf128_ps(t3, 1), _mm256_castps256_ps128(t3));
  const __m128 t8 = _mm_add_ps(t6, _mm_shuffle_ps(t6, t6, _MM_SHUFFLE(1, 0, 3, 2)));
  return _mm_cvtss_f32(t8) + _mm_cvtss_f32(_mm_shuffle_ps(t8, t8, 1));
}

inline void quantize_block(const float* x, int8_t* q, float* d_out, float* s_out) {
  __m256 v[4];
  const __m256 abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7FFFFFFF));
  __m256 m = _mm256_setzero_ps();
  for (int i = 0; i < 4; ++i) {
    v[i] = _mm256_loadu_ps(x + 8 * i);
    m = _mm256_max_ps(m, _mm256_and_ps(v[i], abs_mask));
  }
  const float amax = hmax8(m);
  const __m256 id = _mm256_set1_ps(amax > 0.0f ? 127.0f / amax : 0.0f);
  __m256i qi[4];
  for (int i = 0; i < 4; ++i) qi[i] = _mm256_cvtps_epi32(_mm256_mul_ps(v[i], id));
  // Saturating packs (to int16, then int8: the same as one saturation to int8) interleave 128-bit lanes; the
  // permutation puts the 32 values back in order.
  const __m256i p = _mm256_packs_epi16(_mm256_packs_epi32(qi[0], qi[1]), _mm256_packs_epi32(qi[2], qi[3]));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(q),
                      _mm256_permutevar8x32_epi32(p, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7)));
  *d_out = amax / 127.0f;
  *s_out = block_sum(v);
}

}  // namespace

void quantize_act_q8(const float* x, cpu::ActQ8& a) {
  cpu::quantize_blocks(x, a, quantize_block);
  // Sums of each 4 consecutive q (a dot lane), then of each block.
  const __m256i ones8 = _mm256_set1_epi8(1), ones16 = _mm256_set1_epi16(1);
  for (int64_t i = 0; i < a.n_pad; i += 32) {
    const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a.q + i));
    const __m256i s4 = _mm256_madd_epi16(_mm256_maddubs_epi16(ones8, q), ones16);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(a.sum4 + i / 4), s4);
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(s4), _mm256_extracti128_si256(s4, 1));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(1, 0, 3, 2)));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(2, 3, 0, 1)));
    a.bsum[i / 32] = _mm_cvtsi128_si32(s);
  }
  cpu::fill_zero_points(a);
}

}  // namespace kairo::kernels::avx2
