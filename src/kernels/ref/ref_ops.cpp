// Scalar reference kernels: the oracle. Straightforward loops in f32 with double accumulation where a long sum would
// otherwise drift, so optimized kernels can be checked against them with tight tolerances.
#include "kernels/ref/ref_ops.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/half.h"
#include "tensor/blocks.h"
#include "tensor/dequant.h"
#include "tensor/quantize.h"

namespace kairo::kernels::ref {

void matmul(const MatrixView& w, const float* x, float* y, int64_t n_tokens, ThreadPool& pool) {
  pool.parallel_for(w.n_rows, [&](int64_t r0, int64_t r1) {
    std::vector<float> row(static_cast<size_t>(w.n_cols));
    for (int64_t r = r0; r < r1; ++r) {
      dequantize_row(w.dtype, static_cast<const uint8_t*>(w.data) + r * w.row_bytes, row.data(), w.n_cols);
      for (int64_t t = 0; t < n_tokens; ++t) {
        const float* xt = x + t * w.n_cols;
        double sum = 0.0;
        for (int64_t c = 0; c < w.n_cols; ++c) sum += static_cast<double>(row[c]) * xt[c];
        y[t * w.n_rows + r] = static_cast<float>(sum);
      }
    }
  });
}

void rms_norm(const float* x, const float* weight, float* y, int64_t n_tokens, int64_t dim, float eps) {
  for (int64_t t = 0; t < n_tokens; ++t) {
    const float* xt = x + t * dim;
    float* yt = y + t * dim;
    double ss = 0.0;
    for (int64_t i = 0; i < dim; ++i) ss += static_cast<double>(xt[i]) * xt[i];
    const float scale = static_cast<float>(1.0 / std::sqrt(ss / static_cast<double>(dim) + eps));
    for (int64_t i = 0; i < dim; ++i) yt[i] = xt[i] * scale * weight[i];
  }
}

void rope(float* x, const int32_t* positions, int64_t n_tokens, const RopeParams& p) {
  const int half = p.n_rot / 2;
  for (int64_t t = 0; t < n_tokens; ++t) {
    const double pos = static_cast<double>(positions[t]) * p.freq_scale;
    for (int h = 0; h < p.n_heads; ++h) {
      float* v = x + (t * p.n_heads + h) * p.head_dim;
      for (int i = 0; i < half; ++i) {
        double inv_freq = std::pow(static_cast<double>(p.freq_base), -2.0 * i / p.n_rot);
        if (p.freq_factors) inv_freq /= p.freq_factors[i];
        const double theta = pos * inv_freq;
        const float c = static_cast<float>(std::cos(theta) * p.mscale);
        const float s = static_cast<float>(std::sin(theta) * p.mscale);
        const int i0 = p.style == RopeStyle::Normal ? 2 * i : i;
        const int i1 = p.style == RopeStyle::Normal ? 2 * i + 1 : i + half;
        const float a = v[i0];
        const float b = v[i1];
        v[i0] = a * c - b * s;
        v[i1] = a * s + b * c;
      }
    }
  }
}

void swiglu(const float* gate, const float* up, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float g = gate[i];
    out[i] = g / (1.0f + std::exp(-g)) * up[i];
  }
}

// GELU's tanh form, in double: 0.5 g (1 + tanh(sqrt(2/pi) (g + 0.044715 g^3))).
void geglu(const float* gate, const float* up, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const double g = gate[i];
    const double gelu = 0.5 * g * (1.0 + std::tanh(0.7978845608028654 * (g + 0.044715 * g * g * g)));
    out[i] = static_cast<float>(gelu * up[i]);
  }
}

void add(float* y, const float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] += x[i];
}

void add_bias(float* x, const float* bias, int64_t n_tokens, int64_t n) {
  for (int64_t t = 0; t < n_tokens; ++t) add(x + t * n, bias, n);
}

void get_row(const MatrixView& table, int64_t row, float* out) {
  dequantize_row(table.dtype, static_cast<const uint8_t*>(table.data) + row * table.row_bytes, out, table.n_cols);
}

namespace {

void store(DType dtype, void* base, int64_t idx, const float* src, int64_t n) {
  switch (dtype) {
    case DType::F16: {
      auto* dst = static_cast<uint16_t*>(base) + idx;
      for (int64_t i = 0; i < n; ++i) dst[i] = f32_to_f16(src[i]);
      break;
    }
    case DType::BF16: {
      auto* dst = static_cast<uint16_t*>(base) + idx;
      for (int64_t i = 0; i < n; ++i) dst[i] = f32_to_bf16(src[i]);
      break;
    }
    case DType::Q8_0: {
      // idx and n are multiples of 32 (head_dim is, checked when the KV storage is created).
      quantize_row(DType::Q8_0, src, static_cast<uint8_t*>(base) + idx / 32 * sizeof(BlockQ8_0), n);
      break;
    }
    default: {
      auto* dst = static_cast<float*>(base) + idx;
      for (int64_t i = 0; i < n; ++i) dst[i] = src[i];
      break;
    }
  }
}

float load(DType dtype, const void* base, int64_t idx) {
  switch (dtype) {
    case DType::F16: return f16_to_f32(static_cast<const uint16_t*>(base)[idx]);
    case DType::BF16: return bf16_to_f32(static_cast<const uint16_t*>(base)[idx]);
    case DType::Q8_0: {
      const BlockQ8_0& b = static_cast<const BlockQ8_0*>(base)[idx / 32];
      return f16_to_f32(b.d) * static_cast<float>(b.qs[idx % 32]);
    }
    default: return static_cast<const float*>(base)[idx];
  }
}

// Rounds an activation to the KV dtype before it meets the cache, like llama.cpp does.
float round_like_kv(DType dtype, float x) {
  if (dtype == DType::F16) return f16_to_f32(f32_to_f16(x));
  if (dtype == DType::BF16) return bf16_to_f32(f32_to_bf16(x));
  return x;
}

}  // namespace

void kv_write(const KvLayerView& kv, const int64_t* slot_mapping, const float* k, const float* v, int64_t n_tokens) {
  const int64_t row = static_cast<int64_t>(kv.n_kv_heads) * kv.head_dim;
  for (int64_t t = 0; t < n_tokens; ++t) {
    store(kv.dtype, kv.k, slot_mapping[t] * row, k + t * row, row);
    store(kv.dtype, kv.v, slot_mapping[t] * row, v + t * row, row);
  }
}

void attention(const float* q, float* out, const KvLayerView& kv, const AttentionBatch& batch, int n_heads,
               float scale, ThreadPool& pool) {
  const int head_dim = kv.head_dim;
  const int group = n_heads / kv.n_kv_heads;
  const int64_t kv_row = static_cast<int64_t>(kv.n_kv_heads) * head_dim;
  pool.parallel_for(batch.n_tokens * n_heads, [&](int64_t i0, int64_t i1) {
    std::vector<double> scores;
    std::vector<double> acc(static_cast<size_t>(head_dim));
    for (int64_t i = i0; i < i1; ++i) {
      const int64_t t = i / n_heads;
      const int h = static_cast<int>(i % n_heads);
      const int kvh = h / group;
      const int32_t* table = batch.block_tables + static_cast<int64_t>(batch.seq_idx[t]) * batch.max_blocks_per_seq;
      const int n_ctx = batch.positions[t] + 1;
      const int lo = batch.window > 0 ? std::max(0, n_ctx - batch.window) : 0;  // first position attended
      const float* qv = q + (t * n_heads + h) * head_dim;
      scores.assign(static_cast<size_t>(n_ctx), 0.0);
      double max_score = -INFINITY;
      for (int j = lo; j < n_ctx; ++j) {
        const int64_t slot = static_cast<int64_t>(table[j / kv.block_size]) * kv.block_size + j % kv.block_size;
        const int64_t base = slot * kv_row + static_cast<int64_t>(kvh) * head_dim;
        double dot = 0.0;
        for (int d = 0; d < head_dim; ++d) dot += static_cast<double>(round_like_kv(kv.dtype, qv[d])) * load(kv.dtype, kv.k, base + d);
        scores[j] = dot * scale;
        if (batch.softcap > 0) scores[j] = batch.softcap * std::tanh(scores[j] / batch.softcap);
        if (scores[j] > max_score) max_score = scores[j];
      }
      double sum = 0.0;
      if (batch.sinks) {  // the sink joins the normalisation only
        max_score = std::max(max_score, static_cast<double>(batch.sinks[h]));
        sum += std::exp(batch.sinks[h] - max_score);
      }
      for (int j = lo; j < n_ctx; ++j) {
        scores[j] = std::exp(scores[j] - max_score);
        sum += scores[j];
      }
      std::fill(acc.begin(), acc.end(), 0.0);
      for (int j = lo; j < n_ctx; ++j) {
        const int64_t slot = static_cast<int64_t>(table[j / kv.block_size]) * kv.block_size + j % kv.block_size;
        const int64_t base = slot * kv_row + static_cast<int64_t>(kvh) * head_dim;
        const double p = round_like_kv(kv.dtype, static_cast<float>(scores[j] / sum));
        for (int d = 0; d < head_dim; ++d) acc[d] += p * load(kv.dtype, kv.v, base + d);
      }
      float* o = out + (t * n_heads + h) * head_dim;
      for (int d = 0; d < head_dim; ++d) o[d] = static_cast<float>(acc[d]);
    }
  });
}

}  // namespace kairo::kernels::ref
