// Many-token matmul of a row-tile-packed weight (Packing in quant_matmul.h) with AMX. The packed block is already
// in AMX's B-tile shape ([4-value group][16 rows][4]), so the weights are the B operand and 16 tokens' activation
// blocks (the ActQ8Batch, quantized in A-tile order) the A operand: tdpbssd gives C[token][row] with the 16 rows in
// lanes, the GEMV's orientation. The per-block float step is then the batch-invariance contract's (quant_matmul.h)
// exactly as the row-tile GEMV does it, so one token's outputs are bit-identical in either path, and y rows are
// stored directly (no transposes). Packed values are unsigned; they are made signed once per row tile (per chunk
// of blocks when a single token tile uses them) into a scratch B buffer, so the int dots need no zero-point
// correction.
// GCC 12 reports its own AVX-512 cast intrinsics (deliberately undefined upper lanes) as maybe-uninitialized.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "kernels/cpu/amx_block_pairs.h"
#include "kernels/cpu/amx_tile_config.h"
#include "kernels/cpu/decode_avx512.h"
#include "kernels/cpu/quant_matmul.h"

namespace kairo::kernels::amx {
namespace {

// The signed B operand of blocks [blk0, blk1) of row tile `tile`: [block][8 groups][16 rows][4] int8 (512 bytes a
// block), from b[0].
template <bool kQ4>
void expand_b(const MatrixView& w, int64_t tile, int64_t blk0, int64_t blk1, int8_t* b) {
  const uint8_t* values = avx512::row_tile_base(w, tile);
  for (int64_t blk = blk0; blk < blk1; ++blk) {
    __m512i v[8];
    avx512::row_tile_signed<kQ4>(values + blk * (kQ4 ? 256 : 512), v);
    for (int k = 0; k < 8; ++k) _mm512_store_si512(b + (blk - blk0) * 512 + 64 * k, v[k]);
  }
}

// Blocks blk and blk + 1 (n of them) of 16 tokens (A, from a_q) and a row tile (B, from b), 512 bytes a block each.
inline void start_pair(const int8_t* a_q, const int8_t* b, int n, int set) {
  start_block_pair(set, n, {a_q, 32, b, 64}, {a_q + 512, 32, b + 512, 64});
}

// The blocks [blk0, blk1) of one row tile: their B operands (expanded into b), scales and where y's rows are.
struct BlockRange {
  const int8_t* b;
  const uint8_t* scales;  // the row tile's f16 scales, [block][16 rows]
  int64_t blk0, blk1;
  int64_t r0;
  int nr;
  // The packed row tile whose blocks next_blk0.. are expanded next (nullptr: none to prefetch), its block bytes and
  // how many blocks it has.
  const uint8_t* next = nullptr;
  int64_t next_blk0 = 0;
  int64_t value_bytes = 0;
  int64_t n_blocks = 0;
};

// Tokens [t0, t0 + 16) times blocks r.blk0.. of a row tile, added to the sums in y (r.blk0 == 0: starting from
// zero). The per-block float steps run in block order whatever the chunking, as the batch-invariance contract needs
// (y holds each partial sum exactly in f32 between chunks).
void token_tile(const cpu::ActQ8Batch& a, int64_t t0, const BlockRange& r, int64_t n_rows, float* y) {
  const int n_tok = static_cast<int>(std::min<int64_t>(16, a.n_tokens - t0));
  const __mmask16 mask = static_cast<__mmask16>((1u << r.nr) - 1);
  __m512 acc[16];
#pragma GCC unroll 16
  for (int i = 0; i < 16; ++i)
    acc[i] = r.blk0 == 0 || i >= n_tok ? _mm512_setzero_ps() : _mm512_maskz_loadu_ps(mask, y + (t0 + i) * n_rows + r.r0);
  const int8_t* a_q = a.tile_q_of(t0) + 512 * r.blk0;
  const float* da = a.tile_d_of(t0) + 16 * r.blk0;  // [block][16 tokens]
  const uint8_t* dw_f16 = r.scales + 32 * r.blk0;
  alignas(64) int32_t c[2][2][256];  // [pair parity][block of the pair][16 tokens][16 rows]
  const int64_t n_blocks = r.blk1 - r.blk0;
  const int64_t n_pairs = (n_blocks + 1) / 2;
  auto pair_size = [&](int64_t p) { return static_cast<int>(std::min<int64_t>(2, n_blocks - 2 * p)); };
  auto scale_pair = [&](int64_t p) {
    for (int j = 0; j < pair_size(p); ++j) {
      const int64_t blk = 2 * p + j;
      // The activations of the pair after next go to L1 (the tile loads would otherwise wait for L2).
      if (blk + 4 < n_blocks)
        for (int l = 0; l < 8; ++l) _mm_prefetch(reinterpret_cast<const char*>(a_q + 512 * (blk + 4) + 64 * l), _MM_HINT_T0);
      if (r.next != nullptr && r.next_blk0 + blk < r.n_blocks) {
        const int64_t nb = r.next_blk0 + blk;
        for (int64_t l = 0; l < r.value_bytes; l += 64)
          _mm_prefetch(reinterpret_cast<const char*>(r.next + nb * r.value_bytes + l), _MM_HINT_T1);
        if (nb % 2 == 0) _mm_prefetch(reinterpret_cast<const char*>(r.next + r.n_blocks * r.value_bytes + 32 * nb), _MM_HINT_T1);
      }
      const __m512 dw = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(dw_f16 + 32 * blk)));
      const float* da_blk = da + blk * 16;
      const int32_t* cj = c[p & 1][j];
#pragma GCC unroll 16
      for (int i = 0; i < 16; ++i) {
        const __m512 ci = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_load_si512(cj + 16 * i)), _mm512_set1_ps(da_blk[i]));
        acc[i] = _mm512_fmadd_ps(ci, dw, acc[i]);
      }
    }
  };
  // Software pipeline: iteration p stores pair p's products, issues pair p + 1's, and scales pair p - 1's. The store
  // comes first because the tile unit works in order (issued after the next products, it would wait for them), and
  // the scaling reads results stored one iteration earlier, so its loads never wait for a tile store to complete.
  start_pair(a_q, r.b, pair_size(0), 0);
  for (int64_t p = 0; p < n_pairs; ++p) {
    store_block_pair(static_cast<int>(p & 1), pair_size(p), c[p & 1]);
    if (p + 1 < n_pairs)
      start_pair(a_q + 1024 * (p + 1), r.b + 1024 * (p + 1), pair_size(p + 1), static_cast<int>((p + 1) & 1));
    // Keeps the compiler from hoisting the scaling's loads of c above the tile instructions (the tile unit must
    // get its next products before the vector units start on this pair).
    __asm__ volatile("" : "+m"(c));
    if (p > 0) scale_pair(p - 1);
  }
  scale_pair(n_pairs - 1);
#pragma GCC unroll 16
  for (int i = 0; i < 16; ++i)
    if (i < n_tok) _mm512_mask_storeu_ps(y + (t0 + i) * n_rows + r.r0, mask, acc[i]);
}

void configure() {
  TileConfig cfg;
  for (int t : {0, 1, 2, 3}) {
    cfg.rows[t] = 16;
    cfg.colsb[t] = 64;
  }
  for (int t : {kTileA0, kTileA1}) {  // 16 tokens x one block of 32 int8
    cfg.rows[t] = 16;
    cfg.colsb[t] = 32;
  }
  for (int t : {kTileB0, kTileB1}) {  // 8 groups of 4 values x 16 rows
    cfg.rows[t] = 8;
    cfg.colsb[t] = 64;
  }
  load_tile_config(cfg);
}

}  // namespace

// Blocks of a row tile expanded at a time when a single token tile multiplies them (batched decode): their B
// operands (8 KiB) stay in L1, and the next chunk's packed bytes are prefetched while this one multiplies. With
// several token tiles the whole row is expanded once (fewer passes over the activations and the sums).
constexpr int64_t kChunkBlocks = 16;

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
      const uint8_t* base = avx512::row_tile_base(w, tile);
      BlockRange r{b_scratch, base + n_blocks * value_bytes, 0, 0, tile * avx512::kPackTileRows, 0, nullptr, 0,
                   value_bytes, n_blocks};
      r.nr = static_cast<int>(std::min<int64_t>(avx512::kPackTileRows, w.n_rows - r.r0));
      for (r.blk0 = 0; r.blk0 < n_blocks; r.blk0 = r.blk1) {
        r.blk1 = g1 - g0 > 1 ? n_blocks : std::min(n_blocks, r.blk0 + kChunkBlocks);
        // The packed bytes expanded next (this tile's next chunk, or the next tile's first) go to L2 while the first
        // token tile multiplies: spread over its blocks, so the prefetches never fill the line buffers at once.
        r.next = r.blk1 < n_blocks ? base : tile + 1 < tile1 ? avx512::row_tile_base(w, tile + 1) : nullptr;
        r.next_blk0 = r.blk1 < n_blocks ? r.blk1 : 0;
        if (q4) expand_b<true>(w, tile, r.blk0, r.blk1, b_scratch);
        else expand_b<false>(w, tile, r.blk0, r.blk1, b_scratch);
        for (int64_t tt = g0; tt < g1; ++tt) {
          token_tile(a, 16 * tt, r, w.n_rows, y);
          r.next = nullptr;
        }
      }
    }
  }
  _tile_release();
}

}  // namespace kairo::kernels::amx
