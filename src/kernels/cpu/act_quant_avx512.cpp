// Activation quantization with AVX-512: per block of 32, scale = max|x| / 127, q = round-to-nearest-even(x / scale).
// GCC 12 reports its own AVX-512 cast intrinsics (deliberately undefined upper lanes) as maybe-uninitialized.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#include <immintrin.h>

#include <cstring>

#include "kernels/cpu/act_quant.h"

namespace kairo::kernels::avx512 {
namespace {

// Quantizes one block of 32 floats; returns its scale and float sum.
inline void quantize_block(const float* x, int8_t* q, float* d_out, float* s_out) {
  const __m512 x0 = _mm512_loadu_ps(x);
  const __m512 x1 = _mm512_loadu_ps(x + 16);
  const float amax = _mm512_reduce_max_ps(_mm512_max_ps(_mm512_abs_ps(x0), _mm512_abs_ps(x1)));
  const float d = amax / 127.0f;
  const __m512 id = _mm512_set1_ps(amax > 0.0f ? 127.0f / amax : 0.0f);
  const __m512i q0 = _mm512_cvtps_epi32(_mm512_mul_ps(x0, id));
  const __m512i q1 = _mm512_cvtps_epi32(_mm512_mul_ps(x1, id));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(q), _mm512_cvtsepi32_epi8(q0));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(q + 16), _mm512_cvtsepi32_epi8(q1));
  *d_out = d;
  *s_out = _mm512_reduce_add_ps(_mm512_add_ps(x0, x1));
}

}  // namespace

void quantize_act_q8(const float* x, cpu::ActQ8& a) {
  cpu::quantize_blocks(x, a, quantize_block);
  // Lane sums (sum4), then block sums from them (lanes 0-7 of a 64-byte step are block 2i, 8-15 block 2i + 1).
  const __m512i ones = _mm512_set1_epi8(1);
  for (int64_t i = 0; i < a.n_pad; i += 64) {
    const __m512i s4 = _mm512_dpbusd_epi32(_mm512_setzero_si512(), ones, _mm512_load_si512(a.q + i));
    _mm512_storeu_si512(a.sum4 + i / 4, s4);
    a.bsum[i / 32] = _mm512_mask_reduce_add_epi32(0x00FF, s4);
    a.bsum[i / 32 + 1] = _mm512_mask_reduce_add_epi32(0xFF00, s4);
  }
  cpu::fill_zero_points(a);
}

void quantize_act_q8_batch_token(const float* x, int64_t t, const cpu::ActQ8Batch& a) {
  const int64_t nb = a.n_cols / cpu::kActBlock;
  int8_t* q = a.tile_q + t / cpu::kTileTokens * nb * 512 + 32 * (t % cpu::kTileTokens);
  float* d = a.tile_d + t / cpu::kTileTokens * nb * cpu::kTileTokens + t % cpu::kTileTokens;
  for (int64_t b = 0; b < nb; ++b) {
    if (x != nullptr) {
      float sum;
      quantize_block(x + b * 32, q + 512 * b, d + cpu::kTileTokens * b, &sum);
    } else {
      std::memset(q + 512 * b, 0, 32);
      d[cpu::kTileTokens * b] = 0.0f;
    }
  }
}

namespace {

// rows[t] = 8 dwords of token t (16 tokens, 512 bytes) -> out[k][t] = rows[t][k]: the [k4][token][4] tile layout
void transpose_16x8_dwords(const int8_t* rows, uint8_t* out, __m512i flip) {
  __m512i z[8], y[8];
  for (int j = 0; j < 8; ++j) z[j] = _mm512_load_si512(rows + 64 * j);  // tokens 2j, 2j+1
  // y[2m + h], lane 4k' + i: token 4m + i, dword 4h + k'
  const __m512i idx_lo = _mm512_setr_epi32(0, 8, 16, 24, 1, 9, 17, 25, 2, 10, 18, 26, 3, 11, 19, 27);
  const __m512i idx_hi = _mm512_setr_epi32(4, 12, 20, 28, 5, 13, 21, 29, 6, 14, 22, 30, 7, 15, 23, 31);
  for (int m = 0; m < 4; ++m) {
    y[2 * m] = _mm512_permutex2var_epi32(z[2 * m], idx_lo, z[2 * m + 1]);
    y[2 * m + 1] = _mm512_permutex2var_epi32(z[2 * m], idx_hi, z[2 * m + 1]);
  }
  for (int k = 0; k < 8; ++k) {
    const int h = k / 4;
    __m512i t1, t2;
    switch (k % 4) {  // the shuffle immediates must be constants
      case 0:
        t1 = _mm512_shuffle_i32x4(y[h], y[2 + h], 0x00);
        t2 = _mm512_shuffle_i32x4(y[4 + h], y[6 + h], 0x00);
        break;
      case 1:
        t1 = _mm512_shuffle_i32x4(y[h], y[2 + h], 0x55);
        t2 = _mm512_shuffle_i32x4(y[4 + h], y[6 + h], 0x55);
        break;
      case 2:
        t1 = _mm512_shuffle_i32x4(y[h], y[2 + h], 0xAA);
        t2 = _mm512_shuffle_i32x4(y[4 + h], y[6 + h], 0xAA);
        break;
      default:
        t1 = _mm512_shuffle_i32x4(y[h], y[2 + h], 0xFF);
        t2 = _mm512_shuffle_i32x4(y[4 + h], y[6 + h], 0xFF);
        break;
    }
    const __m512i o = _mm512_shuffle_i32x4(t1, t2, 0x88);  // [y[h].c, y[2+h].c, y[4+h].c, y[6+h].c]
    _mm512_store_si512(out + 64 * k, _mm512_xor_si512(o, flip));
  }
}

}  // namespace

void quantize_act_tiles(const float* x, int64_t t0, int64_t t1, bool as_unsigned, cpu::ActTiles& a) {
  alignas(64) int8_t q[cpu::kTileTokens * 32];
  const __m512i flip = _mm512_set1_epi8(static_cast<char>(as_unsigned ? 0x80 : 0));
  for (int64_t tile = t0 / cpu::kTileTokens; tile * cpu::kTileTokens < t1; ++tile) {
    for (int64_t b = 0; b < a.n_blocks; ++b) {
      float* d = const_cast<float*>(a.d_at(tile, b));
      float* s = const_cast<float*>(a.s_at(tile, b));
      for (int tt = 0; tt < cpu::kTileTokens; ++tt) {
        const int64_t t = tile * cpu::kTileTokens + tt;
        if (t < a.n_tokens) {
          quantize_block(x + t * a.n_cols + b * 32, q + 32 * tt, d + tt, s + tt);
        } else {
          std::memset(q + 32 * tt, 0, 32);
          d[tt] = s[tt] = 0.0f;
        }
      }
      transpose_16x8_dwords(q, const_cast<uint8_t*>(a.q_at(tile, b)), flip);
    }
  }
}

}  // namespace kairo::kernels::avx512
