#include "kernels/cuda/step_graphs.h"

#include <cstdio>

namespace kairo::kernels::cuda {
namespace {

uint64_t segment_key(const std::vector<uint64_t>& signatures) {
  uint64_t h = 0xcbf29ce484222325ull ^ signatures.size();
  for (uint64_t s : signatures) h = (h ^ s) * 0x100000001b3ull + (h >> 29);
  return h;
}

}  // namespace

StepGraphs::StepGraphs(std::unique_ptr<GraphRuntime> runtime, bool enabled)
    : runtime_(std::move(runtime)), enabled_(enabled && runtime_ != nullptr) {}

StepGraphs::~StepGraphs() { drop_graphs(); }

void StepGraphs::record(const Signature& signature, std::function<void()> launch, bool capturable) {
  if (!enabled_) {
    launch();
    return;
  }
  signatures_.push_back(signature.value());
  launches_.push_back(std::move(launch));
  capturable_ = capturable_ && capturable;
}

void StepGraphs::flush() {
  if (launches_.empty()) return;
  const uint64_t key = segment_key(signatures_);
  auto it = graphs_.find(key);
  if (it != graphs_.end() && it->second.signatures == signatures_) {
    runtime_->launch(it->second.exec);
    ++stats_.replayed;
  } else if (capturable_ && it == graphs_.end() && ++seen_[key] >= 2) {
    seen_.erase(key);
    if (graphs_.size() >= kMaxGraphs) drop_graphs();
    runtime_->begin_capture();
    for (auto& launch : launches_) launch();
    void* exec = runtime_->end_capture();
    if (exec == nullptr) {
      std::fprintf(stderr, "kairo: the CUDA runtime refused to capture a step; CUDA graphs are off from now on\n");
      enabled_ = false;
      run_eagerly();
      return;
    }
    runtime_->launch(exec);  // captured work does not run until launched
    graphs_.emplace(key, Graph{signatures_, exec});
    ++stats_.captured;
  } else {
    if (seen_.size() > kMaxRemembered) seen_.clear();
    run_eagerly();
    return;
  }
  signatures_.clear();
  launches_.clear();
  capturable_ = true;
}

void StepGraphs::run_eagerly() {
  for (auto& launch : launches_) launch();
  ++stats_.eager;
  signatures_.clear();
  launches_.clear();
  capturable_ = true;
}

void StepGraphs::drop_graphs() {
  for (auto& [key, g] : graphs_) runtime_->destroy(g.exec);
  graphs_.clear();
}

}  // namespace kairo::kernels::cuda
