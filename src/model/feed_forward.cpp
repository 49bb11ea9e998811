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

void dense_feed_forward(const ModelConfig& c, const LayerWeights& L, int layer, int64_t n, StepBuffers& s,
                        const lora::LoraStep& lora_step, kernels::Numerics numerics) {
  kernels::Device& dev = s.device();
  using lora::LoraTarget;
  const kernels::DeviceMatrix gate_up[] = {L.w_gate, L.w_up};
  const DeviceSpan out[] = {s.gate, s.up};
  dev.matmul(gate_up, 2, s.xn, out, n, numerics);
  const LoraTarget gate_up_targets[] = {LoraTarget::Gate, LoraTarget::Up};
  lora_step.apply(layer, gate_up_targets, 2, s.xn, c.dim, out, numerics);
  gated_activation(c, dev, s.gate, s.up, n * c.ffn_dim);
  dev.matmul(&L.w_down, 1, s.gate, &s.proj, n, numerics);
  const LoraTarget down = LoraTarget::Down;
  lora_step.apply(layer, &down, 1, s.gate, c.ffn_dim, &s.proj, numerics);
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
  Routing& r = s.routing;
  route_tokens(router_logits, n, c.n_experts, c.n_experts_used, r);
  const int n_active = r.n_active();
  // Every active expert's matmuls in one grouped call each: gate and up over the experts' tokens, then down over
  // their packed outputs (s.gate, s.up and s.proj hold one row per (expert, token) pair, expert after expert).
  std::vector<kernels::DeviceMatrix>& gate_up = s.moe_gate_up;
  std::vector<kernels::DeviceMatrix>& down = s.moe_down;
  gate_up.resize(static_cast<size_t>(2 * n_active));
  down.resize(static_cast<size_t>(n_active));
  for (int k = 0; k < n_active; ++k) {
    const auto e = static_cast<size_t>(r.experts[static_cast<size_t>(k)]);
    gate_up[static_cast<size_t>(2 * k)] = L.exp_gate[e];
    gate_up[static_cast<size_t>(2 * k + 1)] = L.exp_up[e];
    down[static_cast<size_t>(k)] = L.exp_down[e];
  }
  const DeviceSpan rows = stage(dev, r.rows);
  const DeviceSpan weights = stage(dev, r.weights);
  const int64_t n_pairs = r.n_entries();
  const DeviceSpan gate_up_out[] = {s.gate, s.up};
  dev.matmul_grouped({gate_up.data(), 2, n_active, r.offsets.data(), rows}, s.xn, gate_up_out, s.moe_in, numerics);
  if (c.moe_biases) {  // each expert's row of the [n_experts, width] bias tensors, on its own rows
    for (int k = 0; k < n_active; ++k) {
      const auto ex = static_cast<uint64_t>(r.experts[static_cast<size_t>(k)]);
      const auto r0 = static_cast<uint64_t>(r.offsets[static_cast<size_t>(k)]);
      const int64_t cnt = r.offsets[static_cast<size_t>(k) + 1] - r.offsets[static_cast<size_t>(k)];
      const uint64_t width = static_cast<uint64_t>(c.expert_ffn_dim) * kF32;
      dev.add_bias(s.gate.at(r0 * width), L.exp_gate_bias.at(ex * width), cnt, c.expert_ffn_dim);
      dev.add_bias(s.up.at(r0 * width), L.exp_up_bias.at(ex * width), cnt, c.expert_ffn_dim);
    }
  }
  gated_activation(c, dev, s.gate, s.up, n_pairs * c.expert_ffn_dim);
  dev.matmul_grouped({down.data(), 1, n_active, r.offsets.data(), {}}, s.gate, &s.proj, s.moe_in, numerics);
  for (int k = 0; k < n_active; ++k) {  // in expert order, so each token adds its experts' outputs in that order
    const auto ex = static_cast<uint64_t>(r.experts[static_cast<size_t>(k)]);
    const auto r0 = static_cast<uint64_t>(r.offsets[static_cast<size_t>(k)]);
    const int64_t cnt = r.offsets[static_cast<size_t>(k) + 1] - r.offsets[static_cast<size_t>(k)];
    const DeviceSpan proj = s.proj.at(r0 * static_cast<uint64_t>(c.dim) * kF32);
    if (c.moe_biases) dev.add_bias(proj, L.exp_down_bias.at(ex * static_cast<uint64_t>(c.dim) * kF32), cnt, c.dim);
    dev.add_rows_scaled(s.x, proj, rows.at(r0 * sizeof(int32_t)), weights.at(r0 * kF32), cnt, c.dim);
  }
}

}  // namespace kairo::model
