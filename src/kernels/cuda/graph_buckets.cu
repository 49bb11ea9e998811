#include "kernels/cuda/graph_buckets.h"

#include <algorithm>
#include <cassert>

namespace kairo::kernels::cuda {

GraphBuckets::GraphBuckets(int max_batch) {
  assert(max_batch >= 1);
  for (int b : {1, 2, 4}) {
    sizes_.push_back(b);
    if (b >= max_batch) return;
  }
  for (int b = 8;; b += 8) {
    sizes_.push_back(b);
    if (b >= max_batch) return;
  }
}

std::optional<int> GraphBuckets::select(int64_t n_tokens) const {
  if (n_tokens <= 0) return std::nullopt;
  const auto it = std::lower_bound(sizes_.begin(), sizes_.end(), n_tokens);
  if (it == sizes_.end()) return std::nullopt;
  return *it;
}

}  // namespace kairo::kernels::cuda
