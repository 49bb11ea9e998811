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

}  // namespace kairo::kernels
