// The reference LoRA deltas: each token's shrink and expand as plain dots of dequantized rows with double sums, the
// scale applied to the shrink as the devices do.
#include <vector>

#include "kernels/ref/ref_ops.h"
#include "tensor/dequant.h"

namespace kairo::kernels::ref {

void add_lora_deltas(const LoraDeltas& job, ThreadPool&) {
  std::vector<float> row, h;
  for (int g = 0; g < job.n_groups; ++g) {
    for (int i = 0; i < job.n_targets; ++i) {
      const LoraPairView& p = job.pairs[g * job.n_targets + i];
      if (p.a.data == nullptr) continue;
      const int64_t rank = p.a.n_rows, n_out = p.b.n_rows;
      h.resize(static_cast<size_t>(rank));
      for (int64_t j = job.offsets[g]; j < job.offsets[g + 1]; ++j) {
        const float* x = job.x + job.rows[j] * job.n_in;
        row.resize(static_cast<size_t>(job.n_in));
        for (int64_t r = 0; r < rank; ++r) {
          dequantize_row(p.a.dtype, static_cast<const uint8_t*>(p.a.data) + r * p.a.row_bytes, row.data(), job.n_in);
          double sum = 0.0;
          for (int64_t c = 0; c < job.n_in; ++c) sum += static_cast<double>(row[c]) * x[c];
          h[r] = static_cast<float>(sum) * p.scale;
        }
        float* y = job.ys[i] + job.rows[j] * n_out;
        row.resize(static_cast<size_t>(rank));
        for (int64_t o = 0; o < n_out; ++o) {
          dequantize_row(p.b.dtype, static_cast<const uint8_t*>(p.b.data) + o * p.b.row_bytes, row.data(), rank);
          double sum = 0.0;
          for (int64_t r = 0; r < rank; ++r) sum += static_cast<double>(row[r]) * h[r];
          y[o] += static_cast<float>(sum);
        }
      }
    }
  }
}

}  // namespace kairo::kernels::ref
