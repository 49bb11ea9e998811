#include "kernels/cuda/cuda_graph.h"

#include "kernels/cuda/cuda_check.h"

namespace kairo::kernels::cuda {

DecodeGraphs::~DecodeGraphs() { clear(); }

void DecodeGraphs::run(int bucket, cudaStream_t stream, const std::function<void()>& record) {
  auto it = graphs_.find(bucket);
  if (it == graphs_.end()) {
    // Thread-local mode: other threads' unrelated CUDA calls (e.g. an upload) don't invalidate this capture.
    CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    record();
    cudaGraph_t graph = nullptr;
    CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
    cudaGraphExec_t exec = nullptr;
    CUDA_CHECK(graph_instantiate(&exec, graph));
    CUDA_CHECK(cudaGraphDestroy(graph));
    it = graphs_.emplace(bucket, exec).first;
  }
  CUDA_CHECK(cudaGraphLaunch(it->second, stream));
}

void DecodeGraphs::clear() {
  for (auto& [bucket, exec] : graphs_) (void)cudaGraphExecDestroy(exec);  // also from the destructor: never throws
  graphs_.clear();
}

}  // namespace kairo::kernels::cuda
