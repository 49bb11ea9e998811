// Many-token matmul of a row-tile-packed weight (Packing in quant_matmul.h) with AMX. The packed block is already
// in AMX's B-tile shape ([4-value group][16 rows][4]), so the weights are the B operand and 16 tokens' activation
// blocks (rows of the token-major ActQ8 batch) the A operand: tdpbssd gives C[token][row] with the 16 rows in
// lanes, the GEMV's orientation. The per-block float step is then the batch-invariance contract's (quant_matmul.h)
// exactly as the row-tile GEMV does it, so one token's outputs are bit-identical in either path, and y rows are
// stored directly (no transposes). Packed values are unsigned; they are made signed once per row tile (and token
// group) into a scratch B buffer, so the int dots need no zero-point correction.
// GCC 12 reports its own AVX-512 cast intrinsics (deliberately undefined upper lanes) as maybe-uninitialized.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "kernels/cpu/amx_tile_config.h"
#include "kernels/cpu/quant_matmul.h"

namespace kairo::kernels::amx {
namespace {

// Tile ids must be literals (GCC pastes them into the assembly). Two result tiles per set, two sets alternating
// between consecutive pairs of blocks so the tile unit multiplies the next pair while the vector units scale this one.
#define KAIRO_RT_A0 4
#define KAIRO_RT_A1 5
#define KAIRO_RT_B0 6
#define KAIRO_RT_B1 7

// The signed B operand of every block of row tile `tile`: [block][8 groups][16 rows][4] int8 (512 bytes a block).
template <bool kQ4>
void expand_b(const MatrixView& w, int64_t tile, int64_t n_blocks, int8_t* b) {
  const uint8_t* values = avx512::row_tile_base(w, tile);
  const __m512i m4 = _mm512_set1_epi8(0x0F);
  for (int64_t blk = 0; blk < n_blocks; ++blk) {
    int8_t* out = b + blk * 512;
    if constexpr (kQ4) {
      const uint8_t* v = values + blk * 256;
      for (int s = 0; s < 4; ++s) {
        const __m512i z = _mm512_loadu_si512(v + 64 * s);
        _mm512_store_si512(out + 128 * s, _mm512_sub_epi8(_mm512_and_si512(z, m4), _mm512_set1_epi8(8)));
        _mm512_store_si512(out + 128 * s + 64,
                           _mm512_sub_epi8(_mm512_and_si512(_mm512_srli_epi16(z, 4), m4), _mm512_set1_epi8(8)));
      }
    } else {
      const uint8_t* v = values + blk * 512;
      for (int k = 0; k < 8; ++k)
        _mm512_store_si512(out + 64 * k, _mm512_xor_si512(_mm512_loadu_si512(v + 64 * k),
                                                          _mm512_set1_epi8(static_cast<char>(0x80))));
    }
  }
}

#define KAIRO_RT_BLOCK(C, A, B, blk)                                  \
  _tile_zero(C);                                                      \
  _tile_loadd(A, a.tile_q_of(t0) + 512 * (blk), 32);                  \
  _tile_loadd(B, b + (blk) * 512, 64);                                \
  _tile_dpbssd(C, A, B);

inline void start_pair(const cpu::ActQ8Batch& a, int64_t t0, const int8_t* b, int64_t blk, int n, int set) {
  if (set == 0) {
    KAIRO_RT_BLOCK(0, KAIRO_RT_A0, KAIRO_RT_B0, blk)
    if (n > 1) { KAIRO_RT_BLOCK(1, KAIRO_RT_A1, KAIRO_RT_B1, blk + 1) }
  } else {
    KAIRO_RT_BLOCK(2, KAIRO_RT_A0, KAIRO_RT_B0, blk)
    if (n > 1) { KAIRO_RT_BLOCK(3, KAIRO_RT_A1, KAIRO_RT_B1, blk + 1) }
  }
}
#undef KAIRO_RT_BLOCK

inline void store_pair(int n, int set, int32_t (*c)[256]) {
  if (set == 0) {
    _tile_stored(0, c[0], 64);
    if (n > 1) _tile_stored(1, c[1], 64);
  } else {
    _tile_stored(2, c[0], 64);
    if (n > 1) _tile_stored(3, c[1], 64);
  }
}

// Tokens [t0, t0 + 16) times row tile `tile` (B expanded in b) into y rows [r0, r0 + nr).
// next_tile: the packed bytes of the row tile to expand next (or nullptr); its block blk is prefetched into L2
// while this tile's block blk is multiplied, so the expansion (the only pass that touches memory) finds it there.
void token_tile(const MatrixView& w, const cpu::ActQ8Batch& a, int64_t t0, const int8_t* b, const uint8_t* scales,
                int64_t r0, int nr, const uint8_t* next_tile, float* y) {
  const int64_t value_bytes = avx512::row_tile_value_bytes(w.packing);
  const int64_t n_blocks = w.n_cols / 32;
  alignas(64) int32_t c[2][256];
  const float* da = a.tile_d_of(t0);  // [block][16 tokens]
  __m512 acc[16];
  for (auto& v : acc) v = _mm512_setzero_ps();
  // Pair p's results are stored before pair p + 1 is issued: the tile unit works in order, so a store issued after
  // the next products would wait for them; this way it only waits for products issued one pair earlier.
  const int64_t n_pairs = (n_blocks + 1) / 2;
  auto pair_size = [&](int64_t p) { return static_cast<int>(std::min<int64_t>(2, n_blocks - 2 * p)); };
  start_pair(a, t0, b, 0, pair_size(0), 0);
  for (int64_t p = 0; p < n_pairs; ++p) {
    const int n = pair_size(p);
    store_pair(n, static_cast<int>(p & 1), c);
    if (p + 1 < n_pairs) start_pair(a, t0, b, 2 * (p + 1), pair_size(p + 1), static_cast<int>((p + 1) & 1));
    for (int j = 0; j < n; ++j) {
      const int64_t blk = 2 * p + j;
      if (next_tile != nullptr) {
        for (int64_t l = 0; l < value_bytes; l += 64)
          _mm_prefetch(reinterpret_cast<const char*>(next_tile + blk * value_bytes + l), _MM_HINT_T1);
        if (blk % 2 == 0)
          _mm_prefetch(reinterpret_cast<const char*>(next_tile + n_blocks * value_bytes + 32 * blk), _MM_HINT_T1);
      }
      const __m512 dw = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(scales + 32 * blk)));
      const float* da_blk = da + blk * 16;
      for (int i = 0; i < 16; ++i) {
        const __m512 ci = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_load_si512(c[j] + 16 * i)), _mm512_set1_ps(da_blk[i]));
        acc[i] = _mm512_fmadd_ps(ci, dw, acc[i]);
      }
    }
  }
  const int n_tok = static_cast<int>(std::min<int64_t>(16, a.n_tokens - t0));
  const __mmask16 mask = static_cast<__mmask16>((1u << nr) - 1);
  for (int i = 0; i < n_tok; ++i) _mm512_mask_storeu_ps(y + (t0 + i) * w.n_rows + r0, mask, acc[i]);
}

void configure() {
  TileConfig cfg;
  for (int t : {0, 1, 2, 3}) {
    cfg.rows[t] = 16;
    cfg.colsb[t] = 64;
  }
  for (int t : {KAIRO_RT_A0, KAIRO_RT_A1}) {  // 16 tokens x one block of 32 int8
    cfg.rows[t] = 16;
    cfg.colsb[t] = 32;
  }
  for (int t : {KAIRO_RT_B0, KAIRO_RT_B1}) {  // 8 groups of 4 values x 16 rows
    cfg.rows[t] = 8;
    cfg.colsb[t] = 64;
  }
  load_tile_config(cfg);
}

}  // namespace

size_t row_tile_b_bytes(int64_t n_cols) { return static_cast<size_t>(n_cols / 32) * 512; }

void gemm_row_tiles(const MatrixView& w, const cpu::ActQ8Batch& a, int64_t tile0, int64_t tile1, int8_t* b_scratch,
                    float* y) {
  const int64_t n_blocks = w.n_cols / 32;
  const int64_t value_bytes = avx512::row_tile_value_bytes(w.packing);
  const bool q4 = w.packing == avx512::kPackQ4_0Rows16;
  configure();
  // Token tiles in groups whose activations stay in L2 (~1 MiB) while this thread's row tiles stream through.
  const int64_t n_token_tiles = (a.n_tokens + 15) / 16;
  const int64_t group = std::max<int64_t>(1, (int64_t{1} << 20) / (16 * a.n_cols));
  for (int64_t g0 = 0; g0 < n_token_tiles; g0 += group) {
    const int64_t g1 = std::min(n_token_tiles, g0 + group);
    for (int64_t tile = tile0; tile < tile1; ++tile) {
      if (q4) expand_b<true>(w, tile, n_blocks, b_scratch);
      else expand_b<false>(w, tile, n_blocks, b_scratch);
      const uint8_t* scales = avx512::row_tile_base(w, tile) + n_blocks * value_bytes;
      const int64_t r0 = tile * avx512::kPackTileRows;
      const int nr = static_cast<int>(std::min<int64_t>(avx512::kPackTileRows, w.n_rows - r0));
      const uint8_t* next = tile + 1 < tile1 ? avx512::row_tile_base(w, tile + 1) : nullptr;
      for (int64_t tt = g0; tt < g1; ++tt) token_tile(w, a, 16 * tt, b_scratch, scales, r0, nr, tt == g0 ? next : nullptr, y);
    }
  }
  _tile_release();
}

}  // namespace kairo::kernels::amx
