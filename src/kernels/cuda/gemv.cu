// Decode GEMV: y[t, r] = W[r, :] . x[t, :] for up to 8 tokens per pass, bandwidth-bound on the weight bytes.
// One warp per row; each lane owns whole 16-byte chunks (chunk_decode.h) and issues kUnroll of them before using
// any, so every SM keeps tens of KB of weight loads in flight. The block first stages the activations in shared
// memory in chunk order (x[j][c], row stride odd so neither the staging writes nor the lanes' reads conflict on
// banks); a lane working on chunk c then reads x[j][c] with its neighbours reading x[j][c+1..].
#include "kernels/cuda/chunk_decode.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/ops.h"

namespace kairo::kernels::cuda {
namespace {

constexpr int kUnroll = 4;

template <DType T, int NT>
__global__ void __launch_bounds__(kGemvWarps * 32)
    gemv_kernel(const uint8_t* __restrict__ qs, const uint16_t* __restrict__ scales, int64_t qs_row_bytes,
                int64_t scale_row_elems, int64_t n_rows, int64_t n_cols, int64_t n_chunks, int64_t x_stride,
                const float* __restrict__ x, float* __restrict__ y, int64_t n_tokens, int rows_per_warp) {
  using D = ChunkDecoder<T>;
  extern __shared__ float xs[];  // [NT][kCols][x_stride]
  const int64_t tile = static_cast<int64_t>(D::kCols) * x_stride;
  const int64_t t0 = static_cast<int64_t>(blockIdx.y) * NT;
  const int n_tok = static_cast<int>(min(static_cast<int64_t>(NT), n_tokens - t0));

  // Stage activations: read x row-major (coalesced), write in chunk order. Padding columns (float types whose
  // last chunk is partial) read as zero, matching the zero weights there.
  const int64_t padded = n_chunks * D::kCols;
  for (int64_t i = threadIdx.x; i < n_tok * padded; i += blockDim.x) {
    const int64_t t = i / padded;
    const int64_t col = i - t * padded;
    int64_t c;
    int j;
    D::locate(col, &c, &j);
    xs[t * tile + j * x_stride + c] = col < n_cols ? x[(t0 + t) * n_cols + col] : 0.0f;
  }
  __syncthreads();

  const int warp = static_cast<int>(threadIdx.x) / 32;
  const int lane = static_cast<int>(threadIdx.x) % 32;
  for (int r = 0; r < rows_per_warp; ++r) {
    const int64_t row = (static_cast<int64_t>(blockIdx.x) * rows_per_warp + r) * kGemvWarps + warp;
    if (row >= n_rows) break;
    const uint8_t* qrow = qs + row * qs_row_bytes;
    const uint16_t* srow = scales != nullptr ? scales + row * scale_row_elems : nullptr;
    float acc[NT];
#pragma unroll
    for (int t = 0; t < NT; ++t) acc[t] = 0.0f;

    for (int64_t c0 = lane; c0 < n_chunks; c0 += 32 * kUnroll) {
      typename D::Raw raw[kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const int64_t c = c0 + 32 * u;
        if (c < n_chunks) raw[u] = D::load(qrow, srow, c);
      }
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const int64_t c = c0 + 32 * u;
        if (c >= n_chunks) break;
        float q[D::kCols], a[D::kRuns], b[D::kRuns];
        D::decode(raw[u], c, q, a, b);
#pragma unroll
        for (int t = 0; t < NT; ++t) {
          if (t >= n_tok) continue;
          const float* xt = xs + t * tile + c;
          float sum = 0.0f;
#pragma unroll
          for (int run = 0; run < D::kRuns; ++run) {
            float sq = 0.0f, sx = 0.0f;
#pragma unroll
            for (int jj = 0; jj < D::kRunLen; ++jj) {
              const int j = run * D::kRunLen + jj;
              const float xv = xt[j * x_stride];
              sq = fmaf(q[j], xv, sq);
              if constexpr (D::kHasMin) sx += xv;
            }
            sum = fmaf(a[run], sq, sum);
            if constexpr (D::kHasMin) sum = fmaf(b[run], sx, sum);
          }
          acc[t] += sum;
        }
      }
    }
#pragma unroll
    for (int t = 0; t < NT; ++t) {
#pragma unroll
      for (int off = 16; off > 0; off >>= 1) acc[t] += warp_xor(acc[t], off);
    }
    if (lane == 0) {
#pragma unroll
      for (int t = 0; t < NT; ++t) {
        if (t < n_tok) y[(t0 + t) * n_rows + row] = acc[t];
      }
    }
  }
}

template <DType T, int NT>
void launch(const PackedLayout& l, const uint8_t* w, const float* x, float* y, int64_t n_tokens, const GemvConfig& g,
            cudaStream_t stream) {
  const uint16_t* scales =
      l.scale_row_elems > 0 ? reinterpret_cast<const uint16_t*>(w + l.scales_offset) : nullptr;
  const dim3 grid(static_cast<unsigned>(g.n_blocks), static_cast<unsigned>(g.n_passes));
  gemv_kernel<T, NT><<<grid, kGemvWarps * 32, g.smem_bytes, stream>>>(
      w, scales, l.qs_row_bytes, l.scale_row_elems, l.n_rows, l.n_cols, l.n_chunks, g.x_stride, x, y, n_tokens,
      g.rows_per_warp);
  CUDA_CHECK_LAUNCH();
}

template <DType T>
void set_limit(int64_t bytes) {
  const int b = static_cast<int>(bytes);
  CUDA_CHECK(set_max_dynamic_smem(gemv_kernel<T, 1>, b));
  CUDA_CHECK(set_max_dynamic_smem(gemv_kernel<T, 2>, b));
  CUDA_CHECK(set_max_dynamic_smem(gemv_kernel<T, 4>, b));
  CUDA_CHECK(set_max_dynamic_smem(gemv_kernel<T, 8>, b));
}

}  // namespace

void gemv_set_smem_limit(int64_t max_smem_bytes) {
  // Set once at context creation: cudaFuncSetAttribute is not something to call inside a graph capture.
  for (DType t : {DType::F32, DType::F16, DType::BF16, DType::Q8_0, DType::Q4_0, DType::Q4_K, DType::Q5_K,
                  DType::Q6_K}) {
    dispatch_weight_type(t, [&]<DType T>() { set_limit<T>(max_smem_bytes); });
  }
}

void gemv(const PackedLayout& l, const uint8_t* w, const float* x, float* y, int64_t n_tokens, const GemvConfig& g,
          cudaStream_t stream) {
  const bool known = dispatch_weight_type(l.dtype, [&]<DType T>() {
    switch (g.tokens_per_pass) {
      case 1: launch<T, 1>(l, w, x, y, n_tokens, g, stream); break;
      case 2: launch<T, 2>(l, w, x, y, n_tokens, g, stream); break;
      case 4: launch<T, 4>(l, w, x, y, n_tokens, g, stream); break;
      default: launch<T, 8>(l, w, x, y, n_tokens, g, stream); break;
    }
  });
  if (!known) cuda_fail("gemv", "weight type not uploaded for CUDA", __FILE__, __LINE__);
}

}  // namespace kairo::kernels::cuda
