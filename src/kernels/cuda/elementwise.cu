// The small per-token ops: RMSNorm, RoPE, SwiGLU/GeGLU, scale, residual add, bias, embedding rows, KV cache writes. Each is
// memory-bound and tiny next to the matmuls; they are written for exactness against the reference first (RoPE
// angles in double, as ref_ops.cpp computes them) and grid-stride so one launch shape serves any size.
#include <algorithm>

#include "kernels/cuda/chunk_decode.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/ops.h"

namespace kairo::kernels::cuda {
namespace {

constexpr int kThreads = kElementwiseThreads;

unsigned grid_for(int64_t n) {
  return static_cast<unsigned>(std::clamp<int64_t>((n + kThreads - 1) / kThreads, 1, 65535));
}

#define KAIRO_GRID_STRIDE(i, n)                                                             \
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < (n); \
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)

__device__ float block_sum(float v) {
  __shared__ float warp_sums[32];
  for (int off = 16; off > 0; off >>= 1) v += warp_xor(v, off);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) warp_sums[warp] = v;
  __syncthreads();
  const int n_warps = (blockDim.x + 31) / 32;
  float total = 0.0f;
  for (int w = 0; w < n_warps; ++w) total += warp_sums[w];
  __syncthreads();  // warp_sums may be reused by a following call
  return total;
}

__global__ void rms_norm_kernel(const float* x, const float* __restrict__ weight, float* y, int64_t dim, float eps) {
  const float* xt = x + blockIdx.x * dim;
  float* yt = y + blockIdx.x * dim;
  float ss = 0.0f;
  for (int64_t i = threadIdx.x; i < dim; i += blockDim.x) ss = fmaf(xt[i], xt[i], ss);
  ss = block_sum(ss);
  const float scale = 1.0f / sqrtf(ss / static_cast<float>(dim) + eps);
  // Each thread rewrites only the elements it read, after the sum: y may alias x.
  for (int64_t i = threadIdx.x; i < dim; i += blockDim.x) yt[i] = xt[i] * scale * weight[i];
}

// freq_factors (llama-3 rope_freqs, YaRN): pair i's inverse frequency is divided by freq_factors[i], as the
// reference divides it, in double.
__global__ void rope_kernel(float* x, const int32_t* __restrict__ positions, int64_t n_tokens, int n_heads,
                            int head_dim, int n_rot, double freq_base, double freq_scale, double mscale, bool neox,
                            const float* __restrict__ freq_factors) {
  const int half = n_rot / 2;
  KAIRO_GRID_STRIDE(idx, n_tokens * n_heads * half) {
    const int i = static_cast<int>(idx % half);
    const int64_t th = idx / half;  // t * n_heads + h
    const int64_t t = th / n_heads;
    const double pos = static_cast<double>(positions[t]) * freq_scale;
    double inv_freq = pow(freq_base, -2.0 * i / n_rot);
    if (freq_factors != nullptr) inv_freq /= freq_factors[i];
    const double theta = pos * inv_freq;
    double s, c;
    sincos(theta, &s, &c);
    const float cf = static_cast<float>(c * mscale), sf = static_cast<float>(s * mscale);
    float* v = x + th * head_dim;
    const int i0 = neox ? i : 2 * i;
    const int i1 = neox ? i + half : 2 * i + 1;
    const float a = v[i0], b = v[i1];
    v[i0] = a * cf - b * sf;
    v[i1] = a * sf + b * cf;
  }
}

__global__ void swiglu_kernel(const float* gate, const float* __restrict__ up, float* out, int64_t n) {
  KAIRO_GRID_STRIDE(i, n) {
    const float g = gate[i];
    out[i] = g / (1.0f + expf(-g)) * up[i];
  }
}

// gelu(g) = g * sigmoid(2 z), z = sqrt(2/pi) (g + 0.044715 g^3) (GELU's tanh form)
__global__ void geglu_kernel(const float* gate, const float* __restrict__ up, float* out, int64_t n) {
  KAIRO_GRID_STRIDE(i, n) {
    const float g = gate[i];
    out[i] = g / (1.0f + expf(-1.5957691216057308f * (g + 0.044715f * g * g * g))) * up[i];
  }
}

// min(gate, limit) * sigmoid(alpha * that) * (clamp(up, -limit, limit) + 1), as the CPU device computes it
__global__ void swiglu_oai_kernel(const float* gate, const float* __restrict__ up, float* out, int64_t n, float alpha,
                                  float limit) {
  KAIRO_GRID_STRIDE(i, n) {
    // std::min / std::clamp's comparisons (not fminf / fmaxf), so a NaN stays a NaN as on the CPU.
    const float g = limit < gate[i] ? limit : gate[i];
    const float u = up[i] < -limit ? -limit : (limit < up[i] ? limit : up[i]);
    out[i] = g / (1.0f + expf(-alpha * g)) * (u + 1.0f);
  }
}

__global__ void scale_kernel(float* x, int64_t n, float factor) {
  KAIRO_GRID_STRIDE(i, n) { x[i] *= factor; }
}

__global__ void add_kernel(float* y, const float* __restrict__ x, int64_t n) {
  KAIRO_GRID_STRIDE(i, n) { y[i] += x[i]; }
}

__global__ void add_bias_kernel(float* x, const float* __restrict__ bias, int64_t n_tokens, int64_t n) {
  KAIRO_GRID_STRIDE(i, n_tokens * n) { x[i] += bias[i % n]; }
}

template <DType T>
__global__ void get_rows_kernel(const uint8_t* __restrict__ qs, const uint16_t* __restrict__ scales,
                                int64_t qs_row_bytes, int64_t scale_row_elems, int64_t n_cols, int64_t n_chunks,
                                const int32_t* __restrict__ ids, int64_t fixed_row, int64_t n_rows, float* out) {
  using D = ChunkDecoder<T>;
  KAIRO_GRID_STRIDE(i, n_rows * n_chunks) {
    const int64_t r = i / n_chunks;
    const int64_t c = i - r * n_chunks;
    const int64_t row = ids != nullptr ? ids[r] : fixed_row;
    const typename D::Raw raw =
        D::load(qs + row * qs_row_bytes, scales != nullptr ? scales + row * scale_row_elems : nullptr, c);
    float q[D::kCols], a[D::kRuns], b[D::kRuns];
    D::decode(raw, c, q, a, b);
#pragma unroll
    for (int j = 0; j < D::kCols; ++j) {
      const int64_t col = D::col(c, j);
      if (col < n_cols) out[r * n_cols + col] = chunk_value<D>(q, a, b, j);
    }
  }
}

template <typename KvT>
__device__ KvT to_kv(float v) {
  if constexpr (std::is_same_v<KvT, __half>) {
    return __float2half_rn(v);
  } else if constexpr (std::is_same_v<KvT, gpu_bf16>) {
    return float_to_bf16_dev(v);
  } else {
    return v;
  }
}

// Tokens with a negative slot (batch padding in a replayed graph) write nothing.
template <typename KvT>
__global__ void kv_write_kernel(KvT* kc, KvT* vc, const int64_t* __restrict__ slot_mapping, const float* k,
                                const float* v, int64_t n_tokens, int64_t row) {
  KAIRO_GRID_STRIDE(i, n_tokens * row) {
    const int64_t t = i / row;
    const int64_t e = i - t * row;
    const int64_t slot = slot_mapping[t];
    if (slot < 0) continue;
    kc[slot * row + e] = to_kv<KvT>(k[i]);
    vc[slot * row + e] = to_kv<KvT>(v[i]);
  }
}

}  // namespace

void rms_norm(const float* x, const float* weight, float* y, int64_t n_tokens, int64_t dim, float eps,
              cudaStream_t stream) {
  if (n_tokens == 0) return;
  rms_norm_kernel<<<static_cast<unsigned>(n_tokens), 256, 0, stream>>>(x, weight, y, dim, eps);
  CUDA_CHECK_LAUNCH();
}

void rope(float* x, const int32_t* positions, int64_t n_tokens, const RopeParams& p, const float* freq_factors,
          cudaStream_t stream) {
  const int64_t n = n_tokens * p.n_heads * (p.n_rot / 2);
  if (n == 0) return;
  // The reference computes pos * freq_scale and the angle in double from the float parameters.
  rope_kernel<<<grid_for(n), kThreads, 0, stream>>>(x, positions, n_tokens, p.n_heads, p.head_dim, p.n_rot,
                                                    static_cast<double>(p.freq_base),
                                                    static_cast<double>(p.freq_scale), static_cast<double>(p.mscale),
                                                    p.style == RopeStyle::Neox, freq_factors);
  CUDA_CHECK_LAUNCH();
}

void swiglu(const float* gate, const float* up, float* out, int64_t n, cudaStream_t stream) {
  if (n == 0) return;
  swiglu_kernel<<<grid_for(n), kThreads, 0, stream>>>(gate, up, out, n);
  CUDA_CHECK_LAUNCH();
}

void geglu(const float* gate, const float* up, float* out, int64_t n, cudaStream_t stream) {
  if (n == 0) return;
  geglu_kernel<<<grid_for(n), kThreads, 0, stream>>>(gate, up, out, n);
  CUDA_CHECK_LAUNCH();
}

void swiglu_oai(const float* gate, const float* up, float* out, int64_t n, float alpha, float limit,
                cudaStream_t stream) {
  if (n == 0) return;
  swiglu_oai_kernel<<<grid_for(n), kThreads, 0, stream>>>(gate, up, out, n, alpha, limit);
  CUDA_CHECK_LAUNCH();
}

void scale(float* x, int64_t n, float factor, cudaStream_t stream) {
  if (n == 0) return;
  scale_kernel<<<grid_for(n), kThreads, 0, stream>>>(x, n, factor);
  CUDA_CHECK_LAUNCH();
}

void add(float* y, const float* x, int64_t n, cudaStream_t stream) {
  if (n == 0) return;
  add_kernel<<<grid_for(n), kThreads, 0, stream>>>(y, x, n);
  CUDA_CHECK_LAUNCH();
}

void add_bias(float* x, const float* bias, int64_t n_tokens, int64_t n, cudaStream_t stream) {
  if (n_tokens * n == 0) return;
  add_bias_kernel<<<grid_for(n_tokens * n), kThreads, 0, stream>>>(x, bias, n_tokens, n);
  CUDA_CHECK_LAUNCH();
}

void get_rows(const PackedLayout& l, const uint8_t* table, const int32_t* ids, int64_t row, int64_t n_rows,
              float* out, cudaStream_t stream) {
  if (n_rows == 0) return;
  const uint16_t* scales =
      l.scale_row_elems > 0 ? reinterpret_cast<const uint16_t*>(table + l.scales_offset) : nullptr;
  const bool known = dispatch_weight_type(l.dtype, [&]<DType T>() {
    get_rows_kernel<T><<<grid_for(n_rows * l.n_chunks), kThreads, 0, stream>>>(
        table, scales, l.qs_row_bytes, l.scale_row_elems, l.n_cols, l.n_chunks, ids, row, n_rows, out);
  });
  if (!known) cuda_fail("get_rows", "table type not uploaded for CUDA", __FILE__, __LINE__);
  CUDA_CHECK_LAUNCH();
}

void kv_write(const KvLayerView& kv, const int64_t* slot_mapping, const float* k, const float* v, int64_t n_tokens,
              cudaStream_t stream) {
  const int64_t row = static_cast<int64_t>(kv.n_kv_heads) * kv.head_dim;
  if (n_tokens * row == 0) return;
  const unsigned grid = grid_for(n_tokens * row);
  switch (kv.dtype) {
    case DType::F16:
      kv_write_kernel<<<grid, kThreads, 0, stream>>>(static_cast<__half*>(kv.k), static_cast<__half*>(kv.v),
                                                     slot_mapping, k, v, n_tokens, row);
      break;
    case DType::BF16:
      kv_write_kernel<<<grid, kThreads, 0, stream>>>(static_cast<gpu_bf16*>(kv.k), static_cast<gpu_bf16*>(kv.v),
                                                     slot_mapping, k, v, n_tokens, row);
      break;
    case DType::F32:
      kv_write_kernel<<<grid, kThreads, 0, stream>>>(static_cast<float*>(kv.k), static_cast<float*>(kv.v),
                                                     slot_mapping, k, v, n_tokens, row);
      break;
    default:
      cuda_fail("kv_write", "KV cache type must be F32, F16 or BF16", __FILE__, __LINE__);
  }
  CUDA_CHECK_LAUNCH();
}

}  // namespace kairo::kernels::cuda
