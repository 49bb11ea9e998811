#include "model/feed_forward.h"

#include <vector>

namespace kairo::model {
namespace {

using kernels::DeviceSpan;

constexpr uint64_t kF32 = sizeof(float);

template <typename T>
DeviceSpan stage(kernels::Device& dev, const std::vector<T>& v) {
  return dev.stage(v.data(), v.size() * sizeof(T));
}

// gate = act(gate) * up, the family's activation (SwiGLU, or gemma's GELU).
void gated_activation(const ModelConfig& c, kernels::Device& dev, DeviceSpan gate, DeviceSpan up, int64_t n) {
  switch (c.ffn_act) {
    case FfnActivation::Silu: return dev.swiglu(gate, up, gate, n);
    case FfnActivation::GeluTanh: return dev.geglu(gate, up, gate, n);
    case FfnActivation::SwigluOai: return dev.swiglu_oai(gate, up, gate, n, 1.702f, 7.0f);
  }
}

}  // namespace

void add_to_residual(const ModelConfig& c, kernels::Device& dev, StepBuffers& s, DeviceSpan post_norm, int64_t n) {
  if (c.post_norms) dev.rms_norm(s.proj, post_norm, s.proj, n, c.dim, c.rms_eps);
  dev.add(s.x, s.proj, n * c.dim);
}

void dense_feed_forward(const ModelConfig& c, const LayerWeights& L, int64_t n, StepBuffers& s,
                        kernels::Numerics numerics) {
  kernels::Device& dev = s.device();
  const kernels::DeviceMatrix gate_up[] = {L.w_gate, L.w_up};
  const DeviceSpan out[] = {s.gate, s.up};
  dev.matmul(gate_up, 2, s.xn, out, n, numerics);
  gated_activation(c, dev, s.gate, s.up, n * c.ffn_dim);
  dev.matmul(&L.w_down, 1, s.gate, &s.proj, n, numerics);
  add_to_residual(c, dev, s, L.post_ffn_norm, n);
}

void moe_feed_forward(const ModelConfig& c, const LayerWeights& L, int64_t n, StepBuffers& s,
                      kernels::Numerics numerics) {
  kernels::Device& dev = s.device();
  dev.matmul(&L.router, 1, s.xn, &s.router, n, numerics);
  if (c.moe_biases) dev.add_bias(s.router, L.router_bias, n, c.n_experts);
  const float* router_logits = s.router.host<const float>();
  if (!dev.host_memory()) {
    s.router_host.resize(static_cast<size_t>(n * c.n_experts));
    dev.download(s.router, s.router_host.data(), s.router_host.size() * kF32);
    router_logits = s.router_host.data();
  }
  route_tokens(router_logits, n, c.n_experts, c.n_experts_used, s.routing);
  for (const ExpertTokens& e : s.routing.experts) {
    const auto cnt = static_cast<int64_t>(e.rows.size());
    const DeviceSpan rows = stage(dev, e.rows);
    const DeviceSpan weights = stage(dev, e.weights);
    // An expert every token chose (always so in single-token decode) reads the normed rows in place.
    const DeviceSpan in = cnt == n ? s.xn : s.moe_in;
    if (cnt != n) dev.gather_rows(s.xn, rows, cnt, c.dim, s.moe_in);
    const kernels::DeviceMatrix gate_up[] = {L.exp_gate[static_cast<size_t>(e.expert)],
                                             L.exp_up[static_cast<size_t>(e.expert)]};
    const DeviceSpan out[] = {s.gate, s.up};
    dev.matmul(gate_up, 2, in, out, cnt, numerics);
    const auto ex = static_cast<uint64_t>(e.expert);
    if (c.moe_biases) {  // this expert's row of each [n_experts, width] bias tensor
      dev.add_bias(s.gate, L.exp_gate_bias.at(ex * c.expert_ffn_dim * kF32), cnt, c.expert_ffn_dim);
      dev.add_bias(s.up, L.exp_up_bias.at(ex * c.expert_ffn_dim * kF32), cnt, c.expert_ffn_dim);
    }
    gated_activation(c, dev, s.gate, s.up, cnt * c.expert_ffn_dim);
    dev.matmul(&L.exp_down[static_cast<size_t>(e.expert)], 1, s.gate, &s.proj, cnt, numerics);
    if (c.moe_biases) dev.add_bias(s.proj, L.exp_down_bias.at(ex * c.dim * kF32), cnt, c.dim);
    dev.add_rows_scaled(s.x, s.proj, rows, weights, cnt, c.dim);
  }
}

}  // namespace kairo::model
