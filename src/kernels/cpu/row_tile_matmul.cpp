#include "kernels/cpu/row_tile_matmul.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <functional>

#include "kernels/cpu/scratch.h"

namespace kairo::kernels::cpu {
namespace {

using avx512::kPackTileRows;

// Row tiles a GEMV kernel call takes at once (they share its activation loads).
constexpr int64_t kRowTileGroup = 4;

}  // namespace

// Each tile's 16 outputs come straight from the kernel: the multi-token kernel for several tokens, else the GEMV
// kernel over up to kRowTileGroup tiles at once.
void multiply_row_tiles(const RowTileKernels& k, const MatrixView& w, const ActQ8* a, int64_t n_tokens, int64_t first,
                        int64_t last, float* y) {
  const avx512::RowTileGemvFn kernel = k.gemv(w.packing);
  const avx512::RowTileTokensFn tokens_kernel = n_tokens > 1 ? k.tokens(w.packing) : nullptr;
  const int64_t full_tiles = w.n_rows / kPackTileRows;  // tiles past it are partial
  const avx512::RowTileGemmFn gemm = n_tokens > 1 && k.gemm != nullptr ? k.gemm(w.packing) : nullptr;
  if (gemm != nullptr && first < full_tiles &&
      gemm(w, a, static_cast<int>(n_tokens), first, std::min(last, full_tiles) - first, y, w.n_rows))
    first = std::min(last, full_tiles);
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

// The threads take chunks of tiles from a shared counter rather than fixed halves: a thread whose reads run faster
// takes more, where with halves it waited for the other (13 % of qwen3-0.6b decode's samples were the pool's
// spin-wait, whose small matrices leave little work to even the halves out). A tile's weights stay in cache across
// its tokens, so memory is read once.
void row_tiles_quantized(const RowTileKernels& k, const RowTileSet& set, const ActQ8* a, int64_t n_tokens,
                         ThreadPool& pool) {
  const int64_t tiles = set.total_tiles();
  constexpr int64_t kChunksPerThread = 8;
  const int64_t chunk = std::max<int64_t>(
      2 * kRowTileGroup, (tiles / (pool.n_threads() * kChunksPerThread)) / kRowTileGroup * kRowTileGroup);
  std::atomic<int64_t> next{0};
  auto job = [&](int, int) {
    for (int64_t g0 = next.fetch_add(chunk, std::memory_order_relaxed); g0 < tiles;
         g0 = next.fetch_add(chunk, std::memory_order_relaxed)) {
      set.for_ranges(g0, std::min(tiles, g0 + chunk), [&](int i, int64_t first, int64_t last) {
        multiply_row_tiles(k, set.ws[i], a, n_tokens, first, last, set.ys[i]);
      });
    }
  };
  pool.run(std::ref(job));
}

// Chunks of tokens, each quantized once and read against the weights once: without a tile unit, reading the
// weights again per chunk costs less than a GEMM that decodes every weight tile to int8 first. Measured on an AMD
// EPYC (Zen 5, 2 threads, TinyLlama-1.1B Q4_0, AVX-512): pp32 243 -> 438 t/s, pp512 353 -> 398, batched decode of
// 16 sequences 153 -> 326 t/s against that GEMM. The same bits either way: both follow the batch-invariance contract.
void row_tiles_matmul(const RowTileKernels& k, const RowTileSet& set, const float* x, int64_t n_tokens,
                      int64_t chunk_tokens, ThreadPool& pool) {
  if (n_tokens <= 0) return;
  const int64_t n_cols = set.ws[0].n_cols;
  const size_t bytes = act_q8_bytes(n_cols);
  chunk_tokens = std::clamp<int64_t>(chunk_tokens, 1, kMaxChunkTokens);
  auto* mem = static_cast<uint8_t*>(
      thread_scratch(ScratchSlot::Activations, bytes * static_cast<size_t>(std::min(n_tokens, chunk_tokens))));
  const int64_t n_chunks = (n_tokens + chunk_tokens - 1) / chunk_tokens;
  ActQ8 a[kMaxChunkTokens];
  float* ys[kMaxRowTileSetMats];
  for (int64_t c = 0; c < n_chunks; ++c) {
    const int64_t t0 = n_tokens * c / n_chunks, t1 = n_tokens * (c + 1) / n_chunks;
    for (int64_t t = t0; t < t1; ++t) {
      a[t - t0] = act_q8_layout(mem + (t - t0) * bytes, n_cols);
      k.quantize(x + t * n_cols, a[t - t0]);
    }
    for (int i = 0; i < set.n; ++i) ys[i] = set.ys[i] + t0 * set.ws[i].n_rows;
    row_tiles_quantized(k, RowTileSet{set.ws, ys, set.n}, a, t1 - t0, pool);
  }
}

bool row_tiles_eligible(const MatrixView* ws, int n_mats) {
  if (n_mats <= 0 || n_mats > kMaxRowTileSetMats) return false;
  for (int i = 0; i < n_mats; ++i) {
    const MatrixView& w = ws[i];
    if (w.n_rows <= 0 || w.n_cols != ws[0].n_cols || w.n_cols % 32 != 0 || !avx512::is_row_tile_packing(w.packing))
      return false;
  }
  return true;
}

}  // namespace kairo::kernels::cpu
