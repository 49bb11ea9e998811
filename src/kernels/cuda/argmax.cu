// On-device greedy sampling: the index of each row's largest logit, so a decode step returns 4 bytes per sequence
// instead of the whole [n, n_vocab] logits. Ties go to the lowest index (what a left-to-right scan picks).
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/ops.h"

namespace kairo::kernels::cuda {
namespace {

struct Best {
  float v;
  int32_t i;
};

__device__ Best better(Best a, Best b) {
  if (b.v > a.v || (b.v == a.v && b.i < a.i)) return b;
  return a;
}

__global__ void argmax_kernel(const float* __restrict__ logits, int64_t n_vocab, int32_t* out) {
  const float* row = logits + blockIdx.x * n_vocab;
  Best best{-INFINITY, INT32_MAX};
  for (int64_t i = threadIdx.x; i < n_vocab; i += blockDim.x) best = better(best, Best{row[i], static_cast<int32_t>(i)});
  for (int off = 16; off > 0; off >>= 1) {
    const Best other{warp_xor(best.v, off), warp_xor(best.i, off)};
    best = better(best, other);
  }
  __shared__ Best warp_best[32];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) warp_best[warp] = best;
  __syncthreads();
  if (threadIdx.x == 0) {
    Best b = warp_best[0];
    for (int w = 1; w < static_cast<int>(blockDim.x / 32); ++w) b = better(b, warp_best[w]);
    // A row of NaNs or -inf only: index 0 rather than an out-of-range id.
    out[blockIdx.x] = b.i == INT32_MAX ? 0 : b.i;
  }
}

}  // namespace

void argmax_rows(const float* logits, int64_t n_rows, int64_t n_vocab, int32_t* out, cudaStream_t stream) {
  if (n_rows == 0) return;
  argmax_kernel<<<static_cast<unsigned>(n_rows), 1024, 0, stream>>>(logits, n_vocab, out);
  CUDA_CHECK_LAUNCH();
}

}  // namespace kairo::kernels::cuda
