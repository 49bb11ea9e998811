#pragma once
// Batch-size buckets for CUDA-graph decode steps. A captured graph bakes in its grid sizes, so a decode step of n
// sequences runs the graph of the smallest bucket >= n, with the batch padded up to the bucket (padding tokens
// write their K/V to a scratch slot and their logits are ignored). Buckets are 1, 2, 4, then every multiple of 8
// up to the largest batch (as vLLM does): padding waste stays under 8 tokens while the graph count stays small.
#include <cstdint>
#include <optional>
#include <vector>

namespace kairo::kernels::cuda {

class GraphBuckets {
 public:
  // Buckets up to max_batch (rounded up to a bucket size). max_batch >= 1.
  explicit GraphBuckets(int max_batch);

  // The bucket a step of n_tokens decode tokens runs in, or nullopt when n_tokens is 0 or above the largest bucket
  // (such steps run eagerly, without a graph).
  std::optional<int> select(int64_t n_tokens) const;
  const std::vector<int>& sizes() const { return sizes_; }
  int largest() const { return sizes_.back(); }

 private:
  std::vector<int> sizes_;
};

}  // namespace kairo::kernels::cuda
