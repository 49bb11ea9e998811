// Matmul driver for the AVX-512 and AMX backends: float weights go to the FMA path; quantized weights quantize
// the activations to int8 once, then run GEMV (one token, bandwidth-bound) or GEMM over 16-row weight tiles
// (unpacked to int8 once per tile) times 16-token activation tiles (AMX; without AMX, row-tile-packed weights run
// the multi-token GEMV kernels in token chunks instead, see row_tiles_matmul). Output rows are split evenly over
// the threads; all scratch is per thread and reused across calls.
// GCC 12 reports its own AVX-512 cast intrinsics (deliberately undefined upper lanes) as maybe-uninitialized.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <functional>

#include "kernels/cpu/decode_avx512.h"
#include "kernels/cpu/isa_kernels.h"
#include "kernels/cpu/quant_matmul.h"
#include "kernels/cpu/row_tile_matmul.h"
#include "kernels/cpu/scratch.h"

namespace kairo::kernels::avx512 {
namespace {

// y[r0 .. r0 + n) from a filled GEMV tile: per block in order acc = fma(c_b, dw_b, acc) with the 16 rows in vector
// lanes, plus the rows' min terms; the GEMM's arithmetic per output exactly (quant_matmul.h).
void gemv_finish(const GemvTile& t, int64_t n_blocks, bool with_min, float* y, int n) {
  __m512 acc = _mm512_setzero_ps();
  for (int64_t b0 = 0; b0 < n_blocks; b0 += 16) {
    __m512 rows[16], c[16], d[16];
    for (int i = 0; i < 16; ++i) rows[i] = _mm512_loadu_ps(t.c + i * t.stride + b0);
    transpose_16x16(rows, c);
    for (int i = 0; i < 16; ++i) rows[i] = _mm512_loadu_ps(t.d + i * t.stride + b0);
    transpose_16x16(rows, d);
    const bool full = b0 + 16 <= n_blocks;
    for (int j = 0; j < 16; ++j)
      if (full || b0 + j < n_blocks) acc = _mm512_fmadd_ps(c[j], d[j], acc);
  }
  if (with_min) {
    __m512 slots[16];
    for (int i = 0; i < 16; ++i) slots[i] = _mm512_loadu_ps(t.mslot + 16 * i);
    acc = _mm512_add_ps(acc, sum_lanes16(slots));
  }
  _mm512_mask_storeu_ps(y, static_cast<__mmask16>((1u << n) - 1), acc);
}

using cpu::RowTileSet;

// Without AMX, a step of more tokens than the row-tile kernels take at once goes through them in chunks
// (row_tiles_matmul).
constexpr int kMaxChunkedMats = cpu::kMaxRowTileSetMats;
constexpr int64_t kChunkTokens = 32;

void gemv(const MatrixView& w, const float* x, float* y, ThreadPool& pool) {
  void* mem = cpu::thread_scratch(cpu::ScratchSlot::Activations, cpu::act_q8_bytes(w.n_cols));
  cpu::ActQ8 a = cpu::act_q8_layout(mem, w.n_cols);
  quantize_act_q8(x, a);
  const GemvFn kernel = gemv_kernel(w.dtype);
  const int64_t n_blocks = w.n_cols / block_k_of(w.dtype);
  const bool with_min = has_min(w.dtype);
  // Whole 16-row tiles per thread. Passed by reference: a std::function holding a capturing lambda would allocate
  // on every call.
  auto job = [&](int ti, int nt) {
    const int64_t tiles = (w.n_rows + kGemvRows - 1) / kGemvRows;
    const int64_t t0 = tiles * ti / nt;
    const int64_t t1 = tiles * (ti + 1) / nt;
    if (t0 >= t1) return;
    GemvTile t = gemv_tile_layout(cpu::thread_scratch(cpu::ScratchSlot::Weights, gemv_tile_bytes(n_blocks)), n_blocks);
    for (int64_t tile = t0; tile < t1; ++tile) {
      const int64_t r0 = tile * kGemvRows;
      const int n = static_cast<int>(std::min<int64_t>(kGemvRows, w.n_rows - r0));
      if (n < kGemvRows) {  // lanes of missing rows: zeros (never read back, but no garbage in the arithmetic)
        std::memset(t.c + n * t.stride, 0, sizeof(float) * static_cast<size_t>((kGemvRows - n) * t.stride));
        std::memset(t.d + n * t.stride, 0, sizeof(float) * static_cast<size_t>((kGemvRows - n) * t.stride));
        std::memset(t.mslot + n * 16, 0, sizeof(float) * static_cast<size_t>((kGemvRows - n) * 16));
      }
      kernel(w, a, r0, n, t);
      gemv_finish(t, n_blocks, with_min, y + r0, n);
    }
  };
  pool.run(std::ref(job));
}

void gemm(const MatrixView& w, const float* x, float* y, int64_t n_tokens, ThreadPool& pool, bool use_amx) {
  void* mem = cpu::thread_scratch(cpu::ScratchSlot::Activations, cpu::act_tiles_bytes(w.n_cols, n_tokens));
  cpu::ActTiles a = cpu::act_tiles_layout(mem, w.n_cols, n_tokens);
  auto quantize = [&](int ti, int nt) {
    const int64_t t0 = a.n_tiles * ti / nt * cpu::kTileTokens;
    const int64_t t1 = a.n_tiles * (ti + 1) / nt * cpu::kTileTokens;
    quantize_act_tiles(x, t0, t1, /*as_unsigned=*/!use_amx, a);
  };
  // One tile: here, where x was just written (as in gemm_amx_row_tiles).
  if (a.n_tiles == 1) quantize(0, 1);
  else pool.run(std::ref(quantize));
  const int64_t n_row_tiles = (w.n_rows + kTileRows - 1) / kTileRows;
  auto multiply = [&](int ti, int nt) {
    const int64_t rt0 = n_row_tiles * ti / nt;
    const int64_t rt1 = n_row_tiles * (ti + 1) / nt;
    if (rt0 >= rt1) return;
    WeightTile wt;
    weight_tile_layout(w.dtype, w.n_cols,
                       cpu::thread_scratch(cpu::ScratchSlot::Weights, weight_tile_bytes(w.dtype, w.n_cols)), wt);
    if (use_amx) amx::configure_tiles(wt.block_k);
    alignas(64) float out[kTileRows * cpu::kTileTokens];
    // Token tiles in groups whose activations stay in L2 (~1.5 MB of 2) while every row tile of this thread streams
    // through them; weight tiles are re-unpacked per group (cheap next to the products).
    const int64_t tile_bytes = a.n_blocks * (512 + 2 * cpu::kTileTokens * 4);
    const int64_t group = std::max<int64_t>(1, (int64_t{3} << 19) / tile_bytes);
    for (int64_t tg = 0; tg < a.n_tiles; tg += group) {
      const int64_t tg_end = std::min(a.n_tiles, tg + group);
      for (int64_t rt = rt0; rt < rt1; ++rt) {
        const int64_t r0 = rt * kTileRows;
        const int64_t nr = std::min<int64_t>(kTileRows, w.n_rows - r0);
        unpack_weight_tile(w, r0, /*with_corr=*/!use_amx, wt);
        for (int64_t tile = tg; tile < tg_end; ++tile) {
          if (use_amx) {
            amx::gemm_tile_amx(wt, a, tile, out);
          } else {
            gemm_tile_vnni(wt, a, tile, out);
          }
          const int64_t nt_tok = std::min<int64_t>(cpu::kTileTokens, n_tokens - tile * cpu::kTileTokens);
          const __mmask16 row_mask = static_cast<__mmask16>((1u << nr) - 1);
          for (int64_t t = 0; t < nt_tok; ++t)
            _mm512_mask_storeu_ps(y + (tile * cpu::kTileTokens + t) * w.n_rows + r0, row_mask,
                                  _mm512_load_ps(out + t * kTileRows));
        }
      }
    }
    if (use_amx) amx::release_tiles();
  };
  pool.run(std::ref(multiply));
}

// AMX with row-tile-packed weights (Q4_0/Q8_0): every token quantized once, straight into the A-tile layout, then
// the row tiles split over the threads.
void gemm_amx_row_tiles(const RowTileSet& set, const float* x, int64_t n_tokens, ThreadPool& pool) {
  const int64_t n_cols = set.ws[0].n_cols;
  void* mem = cpu::thread_scratch(cpu::ScratchSlot::Activations, cpu::act_q8_batch_bytes(n_cols, n_tokens));
  const cpu::ActQ8Batch a = cpu::act_q8_batch_layout(mem, n_cols, n_tokens);
  auto quantize = [&](int ti, int nt) {  // tokens split evenly
    for (int64_t t = a.n_padded * ti / nt; t < a.n_padded * (ti + 1) / nt; ++t)
      quantize_act_q8_batch_token(t < n_tokens ? x + t * n_cols : nullptr, t, a);
  };
  // One token tile (batched decode): this thread just wrote x (norm, SwiGLU), and a worker would wait for those
  // lines from this core's cache: quantizing them here measured faster (16 sequences: 283 -> 295 t/s).
  if (n_tokens <= cpu::kTileTokens) quantize(0, 1);
  else pool.run(std::ref(quantize));
  const int64_t tiles = set.total_tiles();
  auto multiply = [&](int ti, int nt) {
    auto* b = static_cast<int8_t*>(cpu::thread_scratch(cpu::ScratchSlot::Weights, amx::row_tile_b_bytes(n_cols)));
    set.for_ranges(tiles * ti / nt, tiles * (ti + 1) / nt, [&](int i, int64_t first, int64_t last) {
      amx::gemm_row_tiles(set.ws[i], a, first, last, b, set.ys[i]);
    });
  };
  pool.run(std::ref(multiply));
}

// The relaxed AMX path (bf16 tiles, quant_matmul.h): every token's activations rounded to bf16 once, then the row
// tiles split over the threads.
void gemm_amx_row_tiles_bf16(const RowTileSet& set, const float* x, int64_t n_tokens, ThreadPool& pool) {
  const int64_t n_cols = set.ws[0].n_cols;
  const int64_t n_padded = (n_tokens + 15) / 16 * 16;
  auto* a = static_cast<uint16_t*>(cpu::thread_scratch(cpu::ScratchSlot::Activations, amx::act_bf16_tiles_bytes(n_cols, n_tokens)));
  auto convert = [&](int ti, int nt) {
    for (int64_t t = n_padded * ti / nt; t < n_padded * (ti + 1) / nt; ++t)
      amx::convert_act_bf16(t < n_tokens ? x + t * n_cols : nullptr, t, n_cols, a);
  };
  pool.run(std::ref(convert));
  const int64_t tiles = set.total_tiles();
  auto multiply = [&](int ti, int nt) {
    auto* b = static_cast<uint16_t*>(cpu::thread_scratch(cpu::ScratchSlot::Weights, amx::row_tile_bf16_b_bytes(n_cols)));
    set.for_ranges(tiles * ti / nt, tiles * (ti + 1) / nt, [&](int i, int64_t first, int64_t last) {
      amx::gemm_row_tiles_bf16(set.ws[i], a, n_tokens, first, last, b, set.ys[i]);
    });
  };
  pool.run(std::ref(multiply));
}

void matmul_impl(const MatrixView& w, const float* x, float* y, int64_t n_tokens, ThreadPool& pool, bool use_amx) {
  if (n_tokens <= 0 || w.n_rows <= 0) return;
  const bool row_tiles = is_row_tile_packing(w.packing);
  if (w.n_cols % 32 != 0 || !(has_gemm(w.dtype) || row_tiles)) return matmul_float(w, x, y, n_tokens, pool);
  const RowTileSet set{&w, &y, 1};
  if (row_tiles && (n_tokens <= max_row_tile_tokens(w.packing) || !use_amx || !has_tile_gemm(w.packing)))
    return cpu::row_tiles_matmul(row_tile_kernels(), set, x, n_tokens, kChunkTokens, pool);
  if (n_tokens == 1) return gemv(w, x, y, pool);
  if (use_amx && is_legacy_row_tile_packing(w.packing)) return gemm_amx_row_tiles(set, x, n_tokens, pool);
  gemm(w, x, y, n_tokens, pool, use_amx);
}

// The fused paths are exactly matmul_impl's per weight (same quantization, same kernels), so each output is what
// matmul gives; anything they do not cover goes weight by weight.
void matmul_shared_input_impl(const MatrixView* ws, int n_mats, const float* x, float* const* ys, int64_t n_tokens,
                              ThreadPool& pool, bool use_amx) {
  bool row_tiles = n_tokens > 0 && n_mats > 0, legacy = true, tile_gemm = true;
  int64_t max_tokens = kMaxRowTileTokens;
  for (int i = 0; i < n_mats && row_tiles; ++i) {
    const MatrixView& w = ws[i];
    row_tiles = w.n_rows > 0 && w.n_cols == ws[0].n_cols && w.n_cols % 32 == 0 && is_row_tile_packing(w.packing);
    legacy = legacy && is_legacy_row_tile_packing(w.packing);
    tile_gemm = tile_gemm && has_tile_gemm(w.packing);
    if (row_tiles) max_tokens = std::min(max_tokens, max_row_tile_tokens(w.packing));
  }
  const RowTileSet set{ws, ys, n_mats};
  if (row_tiles && n_mats <= kMaxChunkedMats && (n_tokens <= max_tokens || !use_amx || !tile_gemm))
    return cpu::row_tiles_matmul(row_tile_kernels(), set, x, n_tokens, kChunkTokens, pool);
  if (row_tiles && legacy && use_amx) return gemm_amx_row_tiles(set, x, n_tokens, pool);
  for (int i = 0; i < n_mats; ++i) matmul_impl(ws[i], x, ys[i], n_tokens, pool, use_amx);
}

bool relaxed_eligible(const MatrixView& w, int64_t n_cols) {
  const bool float_rows = w.packing == kPackNone && (w.dtype == DType::F16 || w.dtype == DType::BF16 || w.dtype == DType::F32);
  return w.n_rows > 0 && w.n_cols == n_cols && w.n_cols % 32 == 0 && (has_tile_gemm(w.packing) || float_rows);
}

}  // namespace

const cpu::RowTileKernels& row_tile_kernels() {
  static const cpu::RowTileKernels kernels{quantize_act_q8, row_tile_gemv_kernel, row_tile_tokens_kernel,
                                           row_tile_gemm_kernel};
  return kernels;
}

void matmul(const MatrixView& w, const float* x, float* y, int64_t n_tokens, ThreadPool& pool) {
  matmul_impl(w, x, y, n_tokens, pool, /*use_amx=*/false);
}

void matmul_shared_input(const MatrixView* ws, int n_mats, const float* x, float* const* ys, int64_t n_tokens,
                         ThreadPool& pool) {
  matmul_shared_input_impl(ws, n_mats, x, ys, n_tokens, pool, /*use_amx=*/false);
}

}  // namespace kairo::kernels::avx512

namespace kairo::kernels::amx {

void matmul(const MatrixView& w, const float* x, float* y, int64_t n_tokens, ThreadPool& pool) {
  avx512::matmul_impl(w, x, y, n_tokens, pool, /*use_amx=*/true);
}

void matmul_shared_input(const MatrixView* ws, int n_mats, const float* x, float* const* ys, int64_t n_tokens,
                         ThreadPool& pool) {
  avx512::matmul_shared_input_impl(ws, n_mats, x, ys, n_tokens, pool, /*use_amx=*/true);
}

void matmul_relaxed(const MatrixView* ws, int n_mats, const float* x, float* const* ys, int64_t n_tokens,
                    ThreadPool& pool) {
  // Too few tokens for the bf16 path: the exact kernels, fused as matmul_shared_input fuses them.
  if (n_tokens < avx512::kMinRelaxedTokens)
    return avx512::matmul_shared_input_impl(ws, n_mats, x, ys, n_tokens, pool, /*use_amx=*/true);
  bool all = n_mats > 0;
  for (int i = 0; i < n_mats && all; ++i) all = avx512::relaxed_eligible(ws[i], ws[0].n_cols);
  if (all) return avx512::gemm_amx_row_tiles_bf16(avx512::RowTileSet{ws, ys, n_mats}, x, n_tokens, pool);
  for (int i = 0; i < n_mats; ++i) {
    if (avx512::relaxed_eligible(ws[i], ws[i].n_cols))
      avx512::gemm_amx_row_tiles_bf16(avx512::RowTileSet{&ws[i], &ys[i], 1}, x, n_tokens, pool);
    else
      avx512::matmul_impl(ws[i], x, ys[i], n_tokens, pool, /*use_amx=*/true);
  }
}

}  // namespace kairo::kernels::amx
