// Paged attention over the block-table KV layout (kernels/backend.h), for decode and prefill alike: a block per
// (query token, KV head, head group, KV split). GQA-aware: the query heads of one KV head share each K/V row read.
// Each of the block's warps takes every kAttnWarps-th key of the split and keeps an online softmax per head (running
// max, sum and V accumulator, lanes owning contiguous head dims); the warps then merge in shared memory. With more
// than one split (flash-decoding: long contexts, few tokens) each split writes (max, sum, unnormalised output) and a
// second kernel merges the splits.
//
// Sliding windows start each token's keys at positions[t] - window + 1; soft-capping (gemma2) maps each scaled
// score s to softcap * tanh(s / softcap); a sink (gpt-oss) joins the softmax's normalisation in the last merge
// (the warps' merge with one split, the split combine otherwise).
//
// Batch invariance: with one split, a token's keys, their assignment to warps and every merge depend only on that
// token, so its output does not depend on the other tokens of the call. Splits (chosen from the token count) change
// the rounding, so plan_attention never splits under Numerics::Exact.
//
// Like the reference, q is rounded to the KV type before the dot product (llama.cpp meets an F16 cache with F16
// activations). The reference also rounds the normalised softmax weights to the KV type before they meet V; an
// online softmax never holds normalised weights, so here they stay f32 (the difference is below the f16 rounding of
// the cache itself and is covered by the kernel tests' tolerance).
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/ops.h"

namespace kairo::kernels::cuda {
namespace {

__device__ __forceinline__ float kv_to_float(float v) { return v; }
__device__ __forceinline__ float kv_to_float(__half v) { return __half2float(v); }
__device__ __forceinline__ float kv_to_float(gpu_bf16 v) { return bf16_to_float_dev(v); }

template <typename KvT>
__device__ __forceinline__ float round_like_kv(float x) {
  if constexpr (std::is_same_v<KvT, __half>) {
    return __half2float(__float2half_rn(x));
  } else if constexpr (std::is_same_v<KvT, gpu_bf16>) {
    return bf16_to_float_dev(float_to_bf16_dev(x));
  } else {
    return x;
  }
}

struct AttnArgs {
  const float* q;
  float* out;
  float* partials;  // [n_tokens, n_heads, n_splits, head_dim] then [n_tokens, n_heads, n_splits, 2]
  const void* k;
  const void* v;
  const int32_t* positions;
  const int32_t* seq_idx;
  const int32_t* block_tables;
  int64_t n_tokens;
  int max_blocks_per_seq;
  int n_heads, n_kv_heads, group, n_head_groups, head_dim, block_size;
  float scale;
  int window;          // > 0: keys positions[t] - window + 1 .. positions[t]
  float softcap;       // > 0: soft-capped scores
  const float* sinks;  // [n_heads] or null
  int n_splits, split_keys;
};

template <typename KvT, int EPL, int GT>
__global__ void __launch_bounds__(kAttnWarps * 32) paged_attention_kernel(AttnArgs a) {
  const int64_t t = blockIdx.x;
  const int kvh = static_cast<int>(blockIdx.y) / a.n_head_groups;
  const int hg = static_cast<int>(blockIdx.y) % a.n_head_groups;
  const int split = static_cast<int>(blockIdx.z);
  const int warp = static_cast<int>(threadIdx.x) / 32;
  const int lane = static_cast<int>(threadIdx.x) % 32;

  const int n_ctx = a.positions[t] + 1;
  const int lo = a.window > 0 ? max(0, n_ctx - a.window) : 0;
  // This split's keys [s0, s0 + split_keys), less those before the window (a split wholly before it is empty).
  const int s0 = split * a.split_keys;
  const int k_begin = max(lo, s0);
  const int k_end = min(n_ctx, s0 + a.split_keys);
  const int h0 = kvh * a.group + hg * GT;  // first query head of this block
  const int n_h = min(GT, a.group - hg * GT);
  const int32_t* table = a.block_tables + static_cast<int64_t>(a.seq_idx[t]) * a.max_blocks_per_seq;
  const int64_t kv_row = static_cast<int64_t>(a.n_kv_heads) * a.head_dim;
  const KvT* kbase = static_cast<const KvT*>(a.k) + static_cast<int64_t>(kvh) * a.head_dim;
  const KvT* vbase = static_cast<const KvT*>(a.v) + static_cast<int64_t>(kvh) * a.head_dim;

  float qr[GT][EPL];
#pragma unroll
  for (int g = 0; g < GT; ++g) {
#pragma unroll
    for (int e = 0; e < EPL; ++e) {
      const int d = lane * EPL + e;
      qr[g][e] = (g < n_h && d < a.head_dim)
                     ? round_like_kv<KvT>(a.q[(t * a.n_heads + h0 + g) * a.head_dim + d])
                     : 0.0f;
    }
  }
  float m[GT], l[GT], acc[GT][EPL];
#pragma unroll
  for (int g = 0; g < GT; ++g) {
    m[g] = -INFINITY;
    l[g] = 0.0f;
#pragma unroll
    for (int e = 0; e < EPL; ++e) acc[g][e] = 0.0f;
  }

  for (int j = k_begin + warp; j < k_end; j += kAttnWarps) {
    const int64_t slot = static_cast<int64_t>(table[j / a.block_size]) * a.block_size + j % a.block_size;
    const KvT* kp = kbase + slot * kv_row;
    const KvT* vp = vbase + slot * kv_row;
    float kr[EPL], vr[EPL];
#pragma unroll
    for (int e = 0; e < EPL; ++e) {
      const int d = lane * EPL + e;
      kr[e] = d < a.head_dim ? kv_to_float(kp[d]) : 0.0f;
      vr[e] = d < a.head_dim ? kv_to_float(vp[d]) : 0.0f;
    }
    float s[GT];
#pragma unroll
    for (int g = 0; g < GT; ++g) {
      float dot = 0.0f;
#pragma unroll
      for (int e = 0; e < EPL; ++e) dot = fmaf(qr[g][e], kr[e], dot);
      s[g] = dot;
    }
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) {
#pragma unroll
      for (int g = 0; g < GT; ++g) s[g] += warp_xor(s[g], off);
    }
#pragma unroll
    for (int g = 0; g < GT; ++g) {
      float score = s[g] * a.scale;
      if (a.softcap > 0.0f) score = a.softcap * tanhf(score / a.softcap);
      const float m_new = fmaxf(m[g], score);
      const float corr = expf(m[g] - m_new);  // 0 for the first key (m = -inf)
      const float p = expf(score - m_new);
      l[g] = l[g] * corr + p;
#pragma unroll
      for (int e = 0; e < EPL; ++e) acc[g][e] = fmaf(p, vr[e], acc[g][e] * corr);
      m[g] = m_new;
    }
  }

  // Merge the warps' online-softmax states.
  __shared__ float sm_m[kAttnWarps][GT];
  __shared__ float sm_l[kAttnWarps][GT];
  __shared__ float sm_acc[kAttnWarps][GT][EPL * 32];
#pragma unroll
  for (int g = 0; g < GT; ++g) {
    if (lane == 0) {
      sm_m[warp][g] = m[g];
      sm_l[warp][g] = l[g];
    }
#pragma unroll
    for (int e = 0; e < EPL; ++e) sm_acc[warp][g][lane * EPL + e] = acc[g][e];
  }
  __syncthreads();
  for (int idx = threadIdx.x; idx < GT * EPL * 32; idx += blockDim.x) {
    const int g = idx / (EPL * 32);
    const int d = idx % (EPL * 32);
    if (g >= n_h || d >= a.head_dim) continue;
    float mx = -INFINITY;
    for (int w = 0; w < kAttnWarps; ++w) mx = fmaxf(mx, sm_m[w][g]);
    // With one split the sink joins here; with several, in the combine.
    const bool sink_here = a.sinks != nullptr && a.n_splits == 1;
    const float sink = sink_here ? a.sinks[h0 + g] : -INFINITY;
    if (sink_here) mx = fmaxf(mx, sink);
    float sum = 0.0f, o = 0.0f;
    if (mx != -INFINITY) {  // an empty split (past this token's context, or before its window) has no keys at all
      for (int w = 0; w < kAttnWarps; ++w) {
        const float f = expf(sm_m[w][g] - mx);
        sum += sm_l[w][g] * f;
        o += sm_acc[w][g][d] * f;
      }
      if (sink_here) sum += expf(sink - mx);
    }
    const int64_t th = t * a.n_heads + h0 + g;
    if (a.n_splits == 1) {
      a.out[th * a.head_dim + d] = o / sum;
    } else {
      const int64_t ps = th * a.n_splits + split;
      a.partials[ps * a.head_dim + d] = o;
      if (d == 0) {
        float* ml = a.partials + a.n_tokens * a.n_heads * a.n_splits * a.head_dim;
        ml[2 * ps] = mx;
        ml[2 * ps + 1] = sum;
      }
    }
  }
}

// out[t, h, :] from the splits' partials. Some split holds the token's last key, so the max is finite; empty splits
// (max -inf, sum 0) add nothing.
__global__ void combine_splits_kernel(const float* __restrict__ partials, float* out, int64_t n_tokens, int n_heads,
                                      int n_splits, int head_dim, const float* __restrict__ sinks) {
  const int64_t th = blockIdx.x;
  const float* ml = partials + n_tokens * n_heads * n_splits * head_dim;
  float mx = -INFINITY;
  for (int s = 0; s < n_splits; ++s) mx = fmaxf(mx, ml[2 * (th * n_splits + s)]);
  const float sink = sinks != nullptr ? sinks[th % n_heads] : -INFINITY;
  if (sinks != nullptr) mx = fmaxf(mx, sink);
  for (int d = threadIdx.x; d < head_dim; d += blockDim.x) {
    float sum = 0.0f, o = 0.0f;
    for (int s = 0; s < n_splits; ++s) {
      const int64_t ps = th * n_splits + s;
      const float f = expf(ml[2 * ps] - mx);
      sum += ml[2 * ps + 1] * f;
      o += partials[ps * head_dim + d] * f;
    }
    if (sinks != nullptr) sum += expf(sink - mx);
    out[th * head_dim + d] = o / sum;
  }
}

template <typename KvT, int EPL>
void launch_gt(const AttnArgs& args, const AttentionPlan& p, cudaStream_t stream) {
  const dim3 grid(static_cast<unsigned>(args.n_tokens), static_cast<unsigned>(args.n_kv_heads * p.n_head_groups),
                  static_cast<unsigned>(p.n_splits));
  switch (p.heads_per_block) {
    case 1: paged_attention_kernel<KvT, EPL, 1><<<grid, kAttnWarps * 32, 0, stream>>>(args); break;
    case 2: paged_attention_kernel<KvT, EPL, 2><<<grid, kAttnWarps * 32, 0, stream>>>(args); break;
    case 4: paged_attention_kernel<KvT, EPL, 4><<<grid, kAttnWarps * 32, 0, stream>>>(args); break;
    default: paged_attention_kernel<KvT, EPL, 8><<<grid, kAttnWarps * 32, 0, stream>>>(args); break;
  }
}

template <typename KvT>
void launch_epl(const AttnArgs& args, const AttentionPlan& p, cudaStream_t stream) {
  switch (p.elems_per_lane) {
    case 1: launch_gt<KvT, 1>(args, p, stream); break;
    case 2: launch_gt<KvT, 2>(args, p, stream); break;
    case 4: launch_gt<KvT, 4>(args, p, stream); break;
    default: launch_gt<KvT, 8>(args, p, stream); break;
  }
}

}  // namespace

void paged_attention(const float* q, float* out, const KvLayerView& kv, const AttentionBatch& batch, int n_heads,
                     float scale, const AttentionPlan& plan, float* partials, cudaStream_t stream) {
  if (batch.n_tokens == 0) return;
  AttnArgs args{};
  args.q = q;
  args.out = out;
  args.partials = partials;
  args.k = kv.k;
  args.v = kv.v;
  args.positions = batch.positions;
  args.seq_idx = batch.seq_idx;
  args.block_tables = batch.block_tables;
  args.n_tokens = batch.n_tokens;
  args.max_blocks_per_seq = batch.max_blocks_per_seq;
  args.n_heads = n_heads;
  args.n_kv_heads = kv.n_kv_heads;
  args.group = n_heads / kv.n_kv_heads;
  args.n_head_groups = plan.n_head_groups;
  args.head_dim = kv.head_dim;
  args.block_size = kv.block_size;
  args.scale = scale;
  args.window = batch.window;
  args.softcap = batch.softcap;
  args.sinks = batch.sinks;
  args.n_splits = plan.n_splits;
  args.split_keys = plan.split_keys;
  switch (kv.dtype) {
    case DType::F16: launch_epl<__half>(args, plan, stream); break;
    case DType::BF16: launch_epl<gpu_bf16>(args, plan, stream); break;
    case DType::F32: launch_epl<float>(args, plan, stream); break;
    default: cuda_fail("paged_attention", "KV cache type must be F32, F16 or BF16", __FILE__, __LINE__);
  }
  CUDA_CHECK_LAUNCH();
  if (plan.n_splits > 1) {
    combine_splits_kernel<<<static_cast<unsigned>(batch.n_tokens * n_heads), 128, 0, stream>>>(
        partials, out, batch.n_tokens, n_heads, plan.n_splits, kv.head_dim, batch.sinks);
    CUDA_CHECK_LAUNCH();
  }
}

}  // namespace kairo::kernels::cuda
