// Matmul driver for the AVX-512 and AMX backends: float weights go to the FMA path; quantized weights quantize
// the activations to int8 once, then run GEMV (one token, bandwidth-bound) or GEMM over 16-row weight tiles
// (unpacked to int8 once per tile) times 16-token activation tiles (AMX; without AMX, row-tile-packed weights run
// the multi-token GEMV kernels in token chunks instead, see row_tiles_in_chunks). Output rows are split evenly over
// the threads; all scratch is per thread and reused across calls.
// GCC 12 reports its own AVX-512 cast intrinsics (deliberately undefined upper lanes) as maybe-uninitialized.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <functional>

#include "kernels/cpu/decode_avx512.h"
#include "kernels/cpu/isa_kernels.h"
#include "kernels/cpu/quant_matmul.h"
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

// Row-tile-packed weights that read the same input (one, or Q/K/V, or gate/up) and their outputs. Their row tiles
// are numbered one after another, and each thread takes one contiguous range of that numbering: one parallel pass
// and one barrier for all of them.
struct RowTileSet {
  const MatrixView* ws;
  float* const* ys;
  int n;

  int64_t tiles_of(int i) const { return (ws[i].n_rows + kPackTileRows - 1) / kPackTileRows; }
  int64_t total_tiles() const {
    int64_t n_tiles = 0;
    for (int i = 0; i < n; ++i) n_tiles += tiles_of(i);
    return n_tiles;
  }
  // fn(i, first, last) for the row tiles [first, last) of weight i that fall in [g0, g1) of the numbering.
  template <typename Fn>
  void for_ranges(int64_t g0, int64_t g1, Fn&& fn) const {
    int64_t base = 0;
    for (int i = 0; i < n && base < g1; ++i) {
      const int64_t t = tiles_of(i);
      const int64_t first = std::max<int64_t>(g0 - base, 0), last = std::min<int64_t>(g1 - base, t);
      if (first < last) fn(i, first, last);
      base += t;
    }
  }
};

// Row tiles a GEMV kernel call takes at once (they share its activation loads).
constexpr int64_t kRowTileGroup = 4;

// Row tiles shared out to the threads, each tile times every token (a tile's weights stay in cache across its
// tokens, so memory is read once). The threads take chunks from a shared counter rather than fixed halves: a thread
// whose reads run faster takes more, where with halves it waited for the other (13 % of qwen3-0.6b decode's samples
// were the pool's spin-wait, whose small matrices leave little work to even the halves out).
void gemv_row_tiles(const RowTileSet& set, const cpu::ActQ8* a, int64_t n_tokens, ThreadPool& pool) {
  const int64_t tiles = set.total_tiles();
  constexpr int64_t kChunksPerThread = 8;
  const int64_t chunk = std::max<int64_t>(
      2 * kRowTileGroup, (tiles / (pool.n_threads() * kChunksPerThread)) / kRowTileGroup * kRowTileGroup);
  std::atomic<int64_t> next{0};
  auto job = [&](int, int) {
    for (int64_t g0 = next.fetch_add(chunk, std::memory_order_relaxed); g0 < tiles;
         g0 = next.fetch_add(chunk, std::memory_order_relaxed)) {
      set.for_ranges(g0, std::min(tiles, g0 + chunk), [&](int i, int64_t first, int64_t last) {
        multiply_row_tiles(set.ws[i], a, n_tokens, first, last, set.ys[i]);
      });
    }
  };
  pool.run(std::ref(job));
}

// A few tokens (up to max_row_tile_tokens) times row-tile-packed matrices: cheaper than a 16-token AMX tile, and
// the same bits (both follow the batch-invariance contract).
void gemv_row_tiles_tokens(const RowTileSet& set, const float* x, int64_t n_tokens, ThreadPool& pool) {
  const int64_t n_cols = set.ws[0].n_cols;
  const size_t bytes = cpu::act_q8_bytes(n_cols);
  auto* mem = static_cast<uint8_t*>(cpu::thread_scratch(cpu::ScratchSlot::Activations, bytes * kMaxRowTileTokens));
  cpu::ActQ8 a[kMaxRowTileTokens];
  for (int64_t t = 0; t < n_tokens; ++t) {
    a[t] = cpu::act_q8_layout(mem + t * bytes, n_cols);
    quantize_act_q8(x + t * n_cols, a[t]);
  }
  gemv_row_tiles(set, a, n_tokens, pool);
}

// Without AMX, a step of more tokens than the row-tile kernels take at once goes through them in even chunks, each
// reading the weights once at the bandwidth, rather than through the 16-token GEMM, whose VNNI emulation of the AMX
// tile (every weight tile unpacked to int8) costs more than reading the weights again. Measured on an AMD EPYC
// (Zen 5, 2 threads, TinyLlama-1.1B Q4_0): pp32 243 -> 438 t/s, pp512 353 -> 398, batched decode of 16 sequences
// 153 -> 326 t/s. The same bits either way: both paths follow the batch-invariance contract.
constexpr int kMaxChunkedMats = 8;

void row_tiles_in_chunks(const RowTileSet& set, const float* x, int64_t n_tokens, int64_t max_tokens,
                         ThreadPool& pool) {
  const int64_t n_chunks = (n_tokens + max_tokens - 1) / max_tokens;
  float* ys[kMaxChunkedMats];
  for (int64_t c = 0; c < n_chunks; ++c) {
    const int64_t t0 = n_tokens * c / n_chunks, t1 = n_tokens * (c + 1) / n_chunks;
    for (int i = 0; i < set.n; ++i) ys[i] = set.ys[i] + t0 * set.ws[i].n_rows;
    gemv_row_tiles_tokens(RowTileSet{set.ws, ys, set.n}, x + t0 * set.ws[0].n_cols, t1 - t0, pool);
  }
}

void gemv(const MatrixView& w, const float* x, float* y, ThreadPool& pool) {
  void* mem = cpu::thread_scratch(cpu::ScratchSlot::Activations, cpu::act_q8_bytes(w.n_cols));
  cpu::ActQ8 a = cpu::act_q8_layout(mem, w.n_cols);
  quantize_act_q8(x, a);
  if (is_row_tile_packing(w.packing)) return gemv_row_tiles(RowTileSet{&w, &y, 1}, &a, 1, pool);
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
  if (n_tokens == 1) return gemv(w, x, y, pool);
  if (row_tiles && n_tokens <= max_row_tile_tokens(w.packing))
    return gemv_row_tiles_tokens(RowTileSet{&w, &y, 1}, x, n_tokens, pool);
  if (use_amx && is_legacy_row_tile_packing(w.packing)) return gemm_amx_row_tiles(RowTileSet{&w, &y, 1}, x, n_tokens, pool);
  if (row_tiles && (!use_amx || !has_tile_gemm(w.packing)))
    return row_tiles_in_chunks(RowTileSet{&w, &y, 1}, x, n_tokens, max_row_tile_tokens(w.packing), pool);
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
  if (row_tiles && n_tokens == 1) {
    void* mem = cpu::thread_scratch(cpu::ScratchSlot::Activations, cpu::act_q8_bytes(ws[0].n_cols));
    cpu::ActQ8 a = cpu::act_q8_layout(mem, ws[0].n_cols);
    quantize_act_q8(x, a);
    return gemv_row_tiles(set, &a, 1, pool);
  }
  if (row_tiles && n_tokens <= max_tokens) return gemv_row_tiles_tokens(set, x, n_tokens, pool);
  if (row_tiles && legacy && use_amx) return gemm_amx_row_tiles(set, x, n_tokens, pool);
  if (row_tiles && (!use_amx || !tile_gemm) && n_mats <= kMaxChunkedMats)
    return row_tiles_in_chunks(set, x, n_tokens, max_tokens, pool);
  for (int i = 0; i < n_mats; ++i) matmul_impl(ws[i], x, ys[i], n_tokens, pool, use_amx);
}

bool relaxed_eligible(const MatrixView& w, int64_t n_cols) {
  const bool float_rows = w.packing == kPackNone && (w.dtype == DType::F16 || w.dtype == DType::BF16 || w.dtype == DType::F32);
  return w.n_rows > 0 && w.n_cols == n_cols && w.n_cols % 32 == 0 && (has_tile_gemm(w.packing) || float_rows);
}

}  // namespace

// Each tile's 16 outputs come straight from the kernel: the multi-token kernel for several tokens, else the GEMV
// kernel over up to kRowTileGroup tiles at once.
void multiply_row_tiles(const MatrixView& w, const cpu::ActQ8* a, int64_t n_tokens, int64_t first, int64_t last,
                        float* y) {
  const RowTileGemvFn kernel = row_tile_gemv_kernel(w.packing);
  const RowTileTokensFn tokens_kernel = n_tokens > 1 ? row_tile_tokens_kernel(w.packing) : nullptr;
  const int64_t full_tiles = w.n_rows / kPackTileRows;  // tiles past it are partial
  for (int64_t tile = first; tile < last;) {
    if (tokens_kernel != nullptr && tile < full_tiles) {
      tokens_kernel(w, a, static_cast<int>(n_tokens), tile, y + tile * kPackTileRows, w.n_rows);
      ++tile;
      continue;
    }
    const int64_t group = std::min<int64_t>({kRowTileGroup, last - tile, full_tiles - tile});
    const int n = tile < full_tiles ? static_cast<int>(group) : 1;
    const int64_t r0 = tile * kPackTileRows;
    for (int64_t t = 0; t < n_tokens; ++t) {
      float* yt = y + t * w.n_rows;
      if (tile < full_tiles) {
        kernel(w, a[t], tile, n, yt + r0);
      } else {  // the last, partial tile: through a buffer so y isn't written past its end
        alignas(64) float y16[kPackTileRows];
        kernel(w, a[t], tile, 1, y16);
        std::memcpy(yt + r0, y16, sizeof(float) * static_cast<size_t>(w.n_rows - r0));
      }
    }
    tile += n;
  }
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
