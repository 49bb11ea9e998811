// The row gathers and scatters of a mixture of experts: each expert's tokens are gathered into one contiguous block
// before its matmuls, and its outputs are added back into those tokens' residual rows, weighted by the router.
// Rows are distinct within one add_rows_scaled call (one expert's tokens), so no two threads write one element.
#include <algorithm>

#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/ops.h"

namespace kairo::kernels::cuda {
namespace {

constexpr int kThreads = kElementwiseThreads;

unsigned grid_for(int64_t n) {
  return static_cast<unsigned>(std::clamp<int64_t>((n + kThreads - 1) / kThreads, 1, 65535));
}

__global__ void gather_rows_kernel(const float* __restrict__ x, const int32_t* __restrict__ rows, int64_t n,
                                   int64_t dim, float* __restrict__ out) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n * dim;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t r = i / dim;
    out[i] = x[static_cast<int64_t>(rows[r]) * dim + (i - r * dim)];
  }
}

// y += scale * x with the CPU device's rounding: one multiply, then one add (no fused multiply-add).
__global__ void add_rows_scaled_kernel(float* y, const float* __restrict__ x, const int32_t* __restrict__ rows,
                                       const float* __restrict__ scales, int64_t n, int64_t dim) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n * dim;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t r = i / dim;
    float* dst = y + static_cast<int64_t>(rows[r]) * dim + (i - r * dim);
    *dst = __fadd_rn(*dst, __fmul_rn(scales[r], x[i]));
  }
}

}  // namespace

void gather_rows(const float* x, const int32_t* rows, int64_t n, int64_t dim, float* out, cudaStream_t stream) {
  if (n * dim == 0) return;
  gather_rows_kernel<<<grid_for(n * dim), kThreads, 0, stream>>>(x, rows, n, dim, out);
  CUDA_CHECK_LAUNCH();
}

void add_rows_scaled(float* y, const float* x, const int32_t* rows, const float* scales, int64_t n, int64_t dim,
                     cudaStream_t stream) {
  if (n * dim == 0) return;
  add_rows_scaled_kernel<<<grid_for(n * dim), kThreads, 0, stream>>>(y, x, rows, scales, n, dim);
  CUDA_CHECK_LAUNCH();
}

}  // namespace kairo::kernels::cuda
