#include "kernels/device.h"

#include <cassert>

namespace kairo::kernels {

void Device::matmul_grouped(const DeviceGroupedMatmul& g, DeviceSpan x, const DeviceSpan* ys, DeviceSpan gather,
                            Numerics numerics) {
  constexpr int kMaxMats = 8;
  assert(g.n_mats >= 1 && g.n_mats <= kMaxMats);
  const auto n_cols = static_cast<uint64_t>(g.ws[0].view.n_cols);
  DeviceSpan outs[kMaxMats];
  for (int group = 0; group < g.n_groups; ++group) {
    const int64_t first = g.offsets[group], n = g.offsets[group + 1] - first;
    if (n == 0) continue;
    const auto r0 = static_cast<uint64_t>(first);
    DeviceSpan in = x.at(r0 * n_cols * sizeof(float));
    if (!g.in_rows.empty()) {
      gather_rows(x, g.in_rows.at(r0 * sizeof(int32_t)), n, static_cast<int64_t>(n_cols), gather);
      in = gather;
    }
    const DeviceMatrix* ws = g.ws + static_cast<ptrdiff_t>(group) * g.n_mats;
    for (int i = 0; i < g.n_mats; ++i) outs[i] = ys[i].at(r0 * static_cast<uint64_t>(ws[i].view.n_rows) * sizeof(float));
    matmul(ws, g.n_mats, in, outs, n, numerics);
  }
}

void Device::add_lora_deltas(const DeviceLoraDeltas& job) {
  constexpr int kMaxTargets = 8;
  assert(job.n_targets >= 1 && job.n_targets <= kMaxTargets);
  // Each projection's shrinks in their own part of h, group after group in the same place.
  const uint64_t h_stride =
      static_cast<uint64_t>(job.offsets[job.n_groups]) * static_cast<uint64_t>(job.max_rank) * sizeof(float);
  for (int g = 0; g < job.n_groups; ++g) {
    const DeviceLoraPair* pairs = job.pairs + static_cast<ptrdiff_t>(g) * job.n_targets;
    DeviceMatrix shrink[kMaxTargets];
    DeviceSpan h[kMaxTargets];
    int n_shrink = 0;
    for (int i = 0; i < job.n_targets; ++i) {
      if (pairs[i].a == nullptr) continue;
      shrink[n_shrink] = *pairs[i].a;
      h[n_shrink] = job.h.at(static_cast<uint64_t>(i) * h_stride);
      ++n_shrink;
    }
    const int64_t first = job.offsets[g], m = job.offsets[g + 1] - first;
    if (n_shrink == 0 || m == 0) continue;
    const DeviceSpan rows = job.rows.at(static_cast<uint64_t>(first) * sizeof(int32_t));
    gather_rows(job.x, rows, m, job.n_in, job.gather);
    matmul(shrink, n_shrink, job.gather, h, m, job.numerics);  // h_i = A_i · x: [m, rank_i]
    for (int i = 0; i < job.n_targets; ++i) {
      const DeviceLoraPair& p = pairs[i];
      if (p.a == nullptr) continue;
      const DeviceSpan hi = job.h.at(static_cast<uint64_t>(i) * h_stride);
      if (p.scale != 1.0f) scale(hi, m * p.a->view.n_rows, p.scale);  // on rank values, not n_out
      matmul(p.b, 1, hi, &job.expand, m, job.numerics);                 // d = B_i · (scale · h_i): [m, n_out]
      add_rows_scaled(job.ys[i], job.expand, rows, job.ones, m, p.b->view.n_rows);
    }
  }
}

}  // namespace kairo::kernels
