#pragma once
// CUDA graphs for decode steps, one per batch-size bucket (graph_buckets.h). A decode step is ~10 launches per
// layer; at ~2-4 us of launch overhead each that is a large part of a 1B model's step, and a replayed graph pays
// it once. The step's inputs must live at fixed device addresses (token ids, positions, slot mapping, block tables
// copied into the same buffers every step, padded to the bucket) because the graph bakes the pointers in.
#include "kernels/cuda/gpu_runtime.h"

#include <functional>
#include <map>

#include "kernels/cuda/graph_buckets.h"

namespace kairo::kernels::cuda {

class DecodeGraphs {
 public:
  explicit DecodeGraphs(GraphBuckets buckets) : buckets_(std::move(buckets)) {}
  ~DecodeGraphs();
  DecodeGraphs(const DecodeGraphs&) = delete;
  DecodeGraphs& operator=(const DecodeGraphs&) = delete;

  const GraphBuckets& buckets() const { return buckets_; }

  // Runs the step of `bucket` on `stream`: the first time, `record` is captured (it must enqueue its work on
  // `stream` only, allocate nothing and not synchronize) and the graph instantiated; every time, the graph is
  // launched. Workspaces must be reserved beforehand (CudaContext::reserve).
  void run(int bucket, cudaStream_t stream, const std::function<void()>& record);
  bool captured(int bucket) const { return graphs_.count(bucket) != 0; }
  // Drops every graph (after the buffers they point into were reallocated).
  void clear();

 private:
  GraphBuckets buckets_;
  std::map<int, cudaGraphExec_t> graphs_;
};

}  // namespace kairo::kernels::cuda
