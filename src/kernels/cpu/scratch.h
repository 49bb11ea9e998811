#pragma once
// Per-thread scratch memory for the CPU kernels: grow-only, 64-byte aligned, so the hot path allocates only the
// first time a thread sees a larger shape. Each kernel family uses its own slot so nested uses don't collide.
#include <cstddef>

namespace kairo::kernels::cpu {

enum class ScratchSlot {
  Activations,
  Weights,
  Attention,
  Rope,
  GroupedActivations,  // the grouped (mixture of experts) matmul's quantized rows and their views, which stay live
  GroupedViews,        // while the per-expert matmuls it falls back to use Activations and Weights
  GroupedGather,
  Count
};

// The calling thread's buffer for `slot`, at least `bytes` long. Contents are unspecified after growth. Throws
// OutOfMemory when it cannot grow (on a pool thread: ThreadPool::run rethrows it to the step's caller).
void* thread_scratch(ScratchSlot slot, size_t bytes);

inline size_t align_up(size_t n, size_t a) { return (n + a - 1) / a * a; }

}  // namespace kairo::kernels::cpu
