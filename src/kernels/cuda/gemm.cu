// Prefill GEMM through cuBLAS tensor cores: F16/BF16 weights are used in place (the packed layout is plain
// row-major with a 16-byte row pitch); quantized weights are dequantized to an f16 tile of rows first, the simplest
// path that is correct for every type (an int8-MMA kernel reading the quants directly is the faster follow-up).
// Activations are converted to the weight's 16-bit type; accumulation is f32.
//
// The HIP build has no BLAS (Debian's HIP 5.2 ships no rocBLAS): its gemm() is kairo's own GEMV kernel run over the
// tokens 8 at a time (weights re-read once per 8 tokens), the same path Numerics::Exact takes on CUDA.
//
// cuBLAS is column-major: y row-major [n_tokens, n_rows] is C col-major (n_rows x n_tokens, ldc = n_rows);
// W row-major [n_rows, pitch] is A^T with lda = pitch; x row-major [n_tokens, n_cols] is B col-major (ldb = n_cols).
#include "kernels/cuda/chunk_decode.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/cuda_context.h"
#include "kernels/cuda/ops.h"

namespace kairo::kernels::cuda {
namespace {

template <DType T>
__global__ void dequant_f16_kernel(const uint8_t* __restrict__ qs, const uint16_t* __restrict__ scales,
                                   int64_t qs_row_bytes, int64_t scale_row_elems, int64_t n_cols, int64_t n_chunks,
                                   int64_t row0, int64_t n_rows, __half* __restrict__ out) {
  using D = ChunkDecoder<T>;
  const int64_t total = n_rows * n_chunks;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t r = i / n_chunks;
    const int64_t c = i - r * n_chunks;
    const int64_t row = row0 + r;
    const typename D::Raw raw =
        D::load(qs + row * qs_row_bytes, scales != nullptr ? scales + row * scale_row_elems : nullptr, c);
    float q[D::kCols], a[D::kRuns], b[D::kRuns];
    D::decode(raw, c, q, a, b);
#pragma unroll
    for (int j = 0; j < D::kCols; ++j) {
      const int64_t col = D::col(c, j);
      if (col < n_cols) out[r * n_cols + col] = __float2half_rn(chunk_value<D>(q, a, b, j));
    }
  }
}

#if !defined(KAIRO_HIP)
template <typename H>
__global__ void convert_kernel(const float* __restrict__ x, H* __restrict__ out, int64_t n) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    if constexpr (std::is_same_v<H, __half>) {
      out[i] = __float2half_rn(x[i]);
    } else {
      out[i] = float_to_bf16_dev(x[i]);
    }
  }
}

void gemm_call(cublasHandle_t h, int64_t m, int64_t n, int64_t k, const void* a, cudaDataType at, int64_t lda,
               const void* b, cudaDataType bt, int64_t ldb, float* c, int64_t ldc) {
  const float alpha = 1.0f, beta = 0.0f;
  CUBLAS_CHECK(cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(m), static_cast<int>(n),
                            static_cast<int>(k), &alpha, a, at, static_cast<int>(lda), b, bt, static_cast<int>(ldb),
                            &beta, c, CUDA_R_32F, static_cast<int>(ldc), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}
#endif

}  // namespace

void dequantize_rows_f16(const PackedLayout& l, const uint8_t* w, int64_t row0, int64_t n_rows, void* out_f16,
                         cudaStream_t stream) {
  const uint16_t* scales =
      l.scale_row_elems > 0 ? reinterpret_cast<const uint16_t*>(w + l.scales_offset) : nullptr;
  const int64_t total = n_rows * l.n_chunks;
  const unsigned blocks = static_cast<unsigned>(std::min<int64_t>((total + 255) / 256, 65535));
  const bool known = dispatch_weight_type(l.dtype, [&]<DType T>() {
    dequant_f16_kernel<T><<<blocks, 256, 0, stream>>>(w, scales, l.qs_row_bytes, l.scale_row_elems, l.n_cols,
                                                       l.n_chunks, row0, n_rows, static_cast<__half*>(out_f16));
  });
  if (!known) cuda_fail("dequantize_rows_f16", "weight type not uploaded for CUDA", __FILE__, __LINE__);
  CUDA_CHECK_LAUNCH();
}

#if defined(KAIRO_HIP)
void gemm(const PackedLayout& l, const uint8_t* w, const float* x, float* y, int64_t n_tokens, CudaContext& ctx) {
  gemv(l, w, x, y, n_tokens, gemv_config(l, n_tokens, ctx.limits()), ctx.stream());
}
#else
void gemm(const PackedLayout& l, const uint8_t* w, const float* x, float* y, int64_t n_tokens, CudaContext& ctx) {
  cudaStream_t stream = ctx.stream();
  const int64_t n_x = n_tokens * l.n_cols;
  const unsigned x_blocks = static_cast<unsigned>(std::min<int64_t>((n_x + 255) / 256, 65535));
  if (l.dtype == DType::F32) {
    gemm_call(ctx.cublas(), l.n_rows, n_tokens, l.n_cols, w, CUDA_R_32F, l.qs_row_bytes / 4, x, CUDA_R_32F, l.n_cols,
              y, l.n_rows);
    return;
  }
  if (l.dtype == DType::BF16) {
    auto* xb = static_cast<gpu_bf16*>(ctx.act16_workspace(2 * n_x));
    convert_kernel<<<x_blocks, 256, 0, stream>>>(x, xb, n_x);
    CUDA_CHECK_LAUNCH();
    gemm_call(ctx.cublas(), l.n_rows, n_tokens, l.n_cols, w, CUDA_R_16BF, l.qs_row_bytes / 2, xb, CUDA_R_16BF,
              l.n_cols, y, l.n_rows);
    return;
  }
  auto* xh = static_cast<__half*>(ctx.act16_workspace(2 * n_x));
  convert_kernel<<<x_blocks, 256, 0, stream>>>(x, xh, n_x);
  CUDA_CHECK_LAUNCH();
  if (l.dtype == DType::F16) {
    gemm_call(ctx.cublas(), l.n_rows, n_tokens, l.n_cols, w, CUDA_R_16F, l.qs_row_bytes / 2, xh, CUDA_R_16F, l.n_cols,
              y, l.n_rows);
    return;
  }
  const int64_t tile_rows = gemm_tile_rows(l.n_rows, l.n_cols, kDequantTileBytes);
  void* tile = ctx.dequant_workspace(2 * tile_rows * l.n_cols);
  for (int64_t r0 = 0; r0 < l.n_rows; r0 += tile_rows) {
    const int64_t rows = std::min(tile_rows, l.n_rows - r0);
    dequantize_rows_f16(l, w, r0, rows, tile, stream);
    gemm_call(ctx.cublas(), rows, n_tokens, l.n_cols, tile, CUDA_R_16F, l.n_cols, xh, CUDA_R_16F, l.n_cols, y + r0,
              l.n_rows);
  }
}

#endif  // KAIRO_HIP

}  // namespace kairo::kernels::cuda
