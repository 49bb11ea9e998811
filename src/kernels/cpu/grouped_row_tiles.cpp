// The grouped matmul of a mixture of experts (Backend::matmul_grouped) through the row-tile kernels: gate/up or down
// for all of a step's experts in one parallel pass. Every input row is quantized once (a token's activations feed up
// to top-k experts), then the row tiles of every expert's weights form one numbering, split over the threads by cost.
// Per expert the tiles run the kernels the ISA's matmul_shared_input would run for that expert alone (the row-tile
// GEMV for one token, the multi-token kernel for several), so every output keeps its bits; only the dispatch is
// shared. Measured on an AMD EPYC (Zen 5, 2 threads, olmoe-1b-7b's shape, Q4_0, AVX-512): 16 sequences 117 -> 128
// t/s against a matmul per expert (2 barriers per layer instead of about 2 x 56).
#include <algorithm>
#include <cstring>
#include <functional>
#include <vector>

#include "kernels/cpu/row_tile_matmul.h"
#include "kernels/cpu/scratch.h"

namespace kairo::kernels::cpu {
namespace {

using avx512::kPackTileRows;

// Whether the pass takes `w` for a group of n_tokens: row tiles over the pass's n_cols, and the ISA agrees.
bool takes_weight(const GroupedPass& pass, const MatrixView& w, int64_t n_cols, int64_t n_tokens, Numerics numerics) {
  if (w.n_rows <= 0 || w.n_cols != n_cols || n_cols % 32 != 0 || !avx512::is_row_tile_packing(w.packing)) return false;
  return pass.takes == nullptr || pass.takes(w, n_tokens, numerics);
}

// One weight of one group in the pass: its tiles, each costing `cost` (decoding a tile's values, then one dot per
// token), its tokens' quantized rows and its output rows.
struct Segment {
  const MatrixView* w;
  const ActQ8* a;
  int64_t n_tokens;
  float* y;
  int64_t tiles;
  int64_t cost;
};

// Per-tile cost in units of one token's dots over a tile: decoding the tile's values costs about two.
constexpr int64_t kTileDecodeCost = 2;

int64_t ceil_div(int64_t a, int64_t b) { return a <= 0 ? 0 : (a + b - 1) / b; }

// Groups the pass cannot take: gathered and multiplied one by one by the backend's own matmul.
void run_groups_alone(const GroupedMatmul& g, const std::vector<char>& in_pass, ThreadPool& pool,
                      MatmulSharedInputFn matmul) {
  const int64_t n_cols = g.ws[0].n_cols;
  constexpr int kMaxMats = 8;
  float* outs[kMaxMats];
  for (int group = 0; group < g.n_groups; ++group) {
    const int64_t first = g.offsets[group], n = g.offsets[group + 1] - first;
    if (n == 0 || in_pass[static_cast<size_t>(group)]) continue;
    const float* in = g.x + first * n_cols;
    if (g.in_rows != nullptr) {
      auto* gathered = static_cast<float*>(
          thread_scratch(ScratchSlot::GroupedGather, sizeof(float) * static_cast<size_t>(n * n_cols)));
      for (int64_t i = 0; i < n; ++i)
        std::memcpy(gathered + i * n_cols, g.x + int64_t{g.in_rows[first + i]} * n_cols, sizeof(float) * n_cols);
      in = gathered;
    }
    const MatrixView* ws = g.ws + static_cast<ptrdiff_t>(group) * g.n_mats;
    for (int i = 0; i < g.n_mats; ++i) outs[i] = g.ys[i] + first * ws[i].n_rows;
    matmul(ws, g.n_mats, in, outs, n, pool);
  }
}

}  // namespace

void grouped_row_tiles(const GroupedPass& pass, const GroupedMatmul& g, ThreadPool& pool, Numerics numerics) {
  if (g.n_groups <= 0 || g.n_mats <= 0) return;
  const int64_t n_cols = g.ws[0].n_cols;
  const int64_t n_out = g.offsets[g.n_groups];
  std::vector<char> in_pass(static_cast<size_t>(g.n_groups), 0);
  bool any_alone = false;
  for (int group = 0; group < g.n_groups; ++group) {
    const int64_t n = g.offsets[group + 1] - g.offsets[group];
    bool takes = n > 0;
    for (int i = 0; i < g.n_mats && takes; ++i)
      takes = takes_weight(pass, g.ws[group * g.n_mats + i], n_cols, n, numerics);
    in_pass[static_cast<size_t>(group)] = takes;
    any_alone = any_alone || (n > 0 && !takes);
  }
  if (any_alone) run_groups_alone(g, in_pass, pool, pass.alone);

  // The input rows the pass reads, each quantized once: source row r -> slot[r] (-1: not read).
  const int64_t n_src = g.in_rows == nullptr ? n_out : [&] {
    int64_t m = 0;
    for (int64_t i = 0; i < n_out; ++i) m = std::max<int64_t>(m, int64_t{g.in_rows[i]} + 1);
    return m;
  }();
  std::vector<int32_t> slot(static_cast<size_t>(n_src), -1);
  std::vector<int32_t> src_rows;
  for (int group = 0; group < g.n_groups; ++group) {
    if (!in_pass[static_cast<size_t>(group)]) continue;
    for (int64_t i = g.offsets[group]; i < g.offsets[group + 1]; ++i) {
      const int32_t r = g.in_rows == nullptr ? static_cast<int32_t>(i) : g.in_rows[i];
      if (slot[static_cast<size_t>(r)] < 0) {
        slot[static_cast<size_t>(r)] = static_cast<int32_t>(src_rows.size());
        src_rows.push_back(r);
      }
    }
  }
  if (src_rows.empty()) return;
  const auto n_rows_q = static_cast<int64_t>(src_rows.size());
  const size_t row_bytes = act_q8_bytes(n_cols);
  auto* act_mem = static_cast<uint8_t*>(
      thread_scratch(ScratchSlot::GroupedActivations, row_bytes * static_cast<size_t>(n_rows_q)));
  auto* views = static_cast<ActQ8*>(
      thread_scratch(ScratchSlot::GroupedViews, sizeof(ActQ8) * static_cast<size_t>(n_out)));
  auto quantize = [&](int ti, int nt) {
    for (int64_t j = n_rows_q * ti / nt; j < n_rows_q * (ti + 1) / nt; ++j) {
      ActQ8 a = act_q8_layout(act_mem + static_cast<size_t>(j) * row_bytes, n_cols);
      pass.kernels->quantize(g.x + int64_t{src_rows[static_cast<size_t>(j)]} * n_cols, a);
    }
  };
  // A few rows: here, where they were just written (a worker would wait for those lines from this core's cache).
  constexpr int64_t kRowsToQuantizeHere = 16;
  if (n_rows_q <= kRowsToQuantizeHere) quantize(0, 1);
  else pool.run(std::ref(quantize));

  std::vector<Segment> segments;
  int64_t total_cost = 0;
  for (int group = 0; group < g.n_groups; ++group) {
    if (!in_pass[static_cast<size_t>(group)]) continue;
    const int64_t first = g.offsets[group], n = g.offsets[group + 1] - first;
    for (int64_t i = first; i < first + n; ++i) {
      const int32_t r = g.in_rows == nullptr ? static_cast<int32_t>(i) : g.in_rows[i];
      views[i] = act_q8_layout(act_mem + static_cast<size_t>(slot[static_cast<size_t>(r)]) * row_bytes, n_cols);
    }
    for (int i = 0; i < g.n_mats; ++i) {
      const MatrixView& w = g.ws[group * g.n_mats + i];
      const int64_t tiles = (w.n_rows + kPackTileRows - 1) / kPackTileRows;
      segments.push_back(Segment{&w, views + first, n, g.ys[i] + first * w.n_rows, tiles, kTileDecodeCost + n});
      total_cost += tiles * (kTileDecodeCost + n);
    }
  }
  // Thread ti takes the tiles whose cost starts in [total * ti / nt, total * (ti + 1) / nt): contiguous runs of
  // each expert's tiles, so the weights stream in order.
  auto multiply = [&](int ti, int nt) {
    const int64_t lo = total_cost * ti / nt, hi = total_cost * (ti + 1) / nt;
    int64_t base = 0;
    for (const Segment& s : segments) {
      if (base >= hi) break;
      const int64_t first = ceil_div(lo - base, s.cost), last = std::min(s.tiles, ceil_div(hi - base, s.cost));
      if (first < last) multiply_row_tiles(*pass.kernels, *s.w, s.a, s.n_tokens, first, last, s.y);
      base += s.tiles * s.cost;
    }
  };
  pool.run(std::ref(multiply));
}


}  // namespace kairo::kernels::cpu
