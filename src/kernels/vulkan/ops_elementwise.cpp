// rms_norm, rope, swiglu, geglu, add, add_bias, scale, gather_rows and add_rows_scaled.
#include <algorithm>
#include <cassert>
#include <cmath>
#include <vector>

#include "kernels/vulkan/vk_device_impl.h"

namespace kairo::kernels::vulkan {
namespace {

struct NormPush {
  uint32_t dim, x_off, w_off, y_off;
  float eps;
  uint32_t tok0;
};

struct RopePush {
  uint32_t n_heads, head_dim, n_half, neox, x_off, pos_off, freq_off;
  float freq_scale;
  uint32_t n_pairs;
  float mscale;
};

struct ElementwisePush {
  uint32_t n, a_off, b_off, c_off, n_cols;
  float factor, limit;
};

struct GatherPush {
  uint32_t dim, x_off, rows_off, out_off, tok0;
};

}  // namespace

void VulkanDevice::rms_norm(DeviceSpan x, DeviceSpan weight, DeviceSpan y, int64_t n_tokens, int64_t dim, float eps) {
  const Pipeline& p = pipelines_->get("rms_norm", 3);
  NormPush pc{};
  pc.dim = static_cast<uint32_t>(dim);
  pc.eps = eps;
  VkDescriptorBufferInfo b[3] = {bind(x, 4, &pc.x_off), bind(weight, 4, &pc.w_off), bind(y, 4, &pc.y_off)};
  for (int64_t t0 = 0; t0 < n_tokens; t0 += kMaxGroups) {
    pc.tok0 = static_cast<uint32_t>(t0);
    recorder_->dispatch(p, b, &pc, sizeof(pc), static_cast<uint32_t>(std::min<int64_t>(kMaxGroups, n_tokens - t0)), 1);
  }
}

// The inverse frequency base^(-2i / n_rot) (divided by the pair's frequency factor, llama-3 scaling) of every pair,
// computed once per (n_rot, base, factors) in double, as the CPU reference does, and split into a float pair
// (hi + lo) so the shader's angle keeps double-like accuracy at long positions.
DeviceSpan VulkanDevice::rope_frequencies(const RopeParams& p) {
  // Keyed by the factors' values, not their address: another model may later be mapped at the same address.
  std::vector<float> factors;
  if (p.freq_factors) factors.assign(p.freq_factors, p.freq_factors + p.n_rot / 2);
  const auto key = std::make_tuple(p.n_rot, p.freq_base, factors);
  auto it = rope_freqs_.find(key);
  if (it != rope_freqs_.end()) return DeviceSpan{nullptr, it->second, 0};
  const int n_half = p.n_rot / 2;
  std::vector<float> pairs(2 * static_cast<size_t>(n_half));
  for (int i = 0; i < n_half; ++i) {
    double f = std::pow(static_cast<double>(p.freq_base), -2.0 * i / p.n_rot);
    if (p.freq_factors) f /= p.freq_factors[i];
    pairs[2 * i] = static_cast<float>(f);
    pairs[2 * i + 1] = static_cast<float>(f - static_cast<double>(pairs[2 * i]));
  }
  auto b = create_buffer(*ctx_, pairs.size() * sizeof(float), BufferKind::Device, "rope frequencies");
  if (!b.ok()) throw DeviceLost(b.error().message);
  const uint32_t id = add_buffer(*b);
  write_bytes(id, 0, pairs.data(), pairs.size() * sizeof(float));
  rope_freqs_.emplace(key, id);
  return DeviceSpan{nullptr, id, 0};
}

void VulkanDevice::rope(DeviceSpan x, DeviceSpan positions, int64_t n_tokens, const RopeParams& p) {
  assert(p.n_rot % 2 == 0 && p.n_rot <= p.head_dim);
  if (n_tokens <= 0 || p.n_rot == 0) return;
  const DeviceSpan freqs = rope_frequencies(p);
  const Pipeline& pl = pipelines_->get("rope", 3);
  RopePush pc{};
  pc.n_heads = static_cast<uint32_t>(p.n_heads);
  pc.head_dim = static_cast<uint32_t>(p.head_dim);
  pc.n_half = static_cast<uint32_t>(p.n_rot / 2);
  pc.neox = p.style == RopeStyle::Neox ? 1 : 0;
  pc.freq_scale = p.freq_scale;
  pc.mscale = p.mscale;
  const uint64_t n_pairs = static_cast<uint64_t>(n_tokens) * p.n_heads * pc.n_half;
  pc.n_pairs = static_cast<uint32_t>(n_pairs);
  VkDescriptorBufferInfo b[3] = {bind(x, 4, &pc.x_off), bind(positions, 4, &pc.pos_off), bind(freqs, 8, &pc.freq_off)};
  uint32_t gx = 0, gy = 0;
  flat_grid((n_pairs + 63) / 64, &gx, &gy);
  recorder_->dispatch(pl, b, &pc, sizeof(pc), gx, gy);
}

namespace {

void elementwise(Pipelines& pipelines, Recorder& rec, const char* name, uint32_t n_bindings,
                 const VkDescriptorBufferInfo* b, ElementwisePush pc) {
  const Pipeline& p = pipelines.get(name, n_bindings);
  uint32_t gx = 0, gy = 0;
  flat_grid((static_cast<uint64_t>(pc.n) + 255) / 256, &gx, &gy);
  rec.dispatch(p, std::span<const VkDescriptorBufferInfo>(b, n_bindings), &pc, sizeof(pc), gx, gy);
}

}  // namespace

void VulkanDevice::swiglu(DeviceSpan gate, DeviceSpan up, DeviceSpan out, int64_t n) {
  ElementwisePush pc{};
  pc.n = static_cast<uint32_t>(n);
  VkDescriptorBufferInfo b[3] = {bind(gate, 4, &pc.a_off), bind(up, 4, &pc.b_off), bind(out, 4, &pc.c_off)};
  elementwise(*pipelines_, *recorder_, "swiglu", 3, b, pc);
}

void VulkanDevice::geglu(DeviceSpan gate, DeviceSpan up, DeviceSpan out, int64_t n) {
  ElementwisePush pc{};
  pc.n = static_cast<uint32_t>(n);
  VkDescriptorBufferInfo b[3] = {bind(gate, 4, &pc.a_off), bind(up, 4, &pc.b_off), bind(out, 4, &pc.c_off)};
  elementwise(*pipelines_, *recorder_, "geglu", 3, b, pc);
}

void VulkanDevice::swiglu_oai(DeviceSpan gate, DeviceSpan up, DeviceSpan out, int64_t n, float alpha, float limit) {
  ElementwisePush pc{};
  pc.n = static_cast<uint32_t>(n);
  pc.factor = alpha;
  pc.limit = limit;
  VkDescriptorBufferInfo b[3] = {bind(gate, 4, &pc.a_off), bind(up, 4, &pc.b_off), bind(out, 4, &pc.c_off)};
  elementwise(*pipelines_, *recorder_, "swiglu_oai", 3, b, pc);
}

void VulkanDevice::scale(DeviceSpan x, int64_t n, float factor) {
  ElementwisePush pc{};
  pc.n = static_cast<uint32_t>(n);
  pc.factor = factor;
  VkDescriptorBufferInfo b[1] = {bind(x, 4, &pc.a_off)};
  elementwise(*pipelines_, *recorder_, "scale", 1, b, pc);
}

void VulkanDevice::add(DeviceSpan y, DeviceSpan x, int64_t n) {
  ElementwisePush pc{};
  pc.n = static_cast<uint32_t>(n);
  VkDescriptorBufferInfo b[2] = {bind(y, 4, &pc.a_off), bind(x, 4, &pc.b_off)};
  elementwise(*pipelines_, *recorder_, "add", 2, b, pc);
}

void VulkanDevice::add_bias(DeviceSpan x, DeviceSpan bias, int64_t n_tokens, int64_t n) {
  ElementwisePush pc{};
  pc.n = static_cast<uint32_t>(n_tokens * n);
  pc.n_cols = static_cast<uint32_t>(n);
  VkDescriptorBufferInfo b[2] = {bind(x, 4, &pc.a_off), bind(bias, 4, &pc.b_off)};
  elementwise(*pipelines_, *recorder_, "add_bias", 2, b, pc);
}

void VulkanDevice::gather_rows(DeviceSpan x, DeviceSpan rows, int64_t n, int64_t dim, DeviceSpan out) {
  const Pipeline& p = pipelines_->get("gather_rows", 3);
  GatherPush pc{};
  pc.dim = static_cast<uint32_t>(dim);
  VkDescriptorBufferInfo b[3] = {bind(x, 4, &pc.x_off), bind(rows, 4, &pc.rows_off), bind(out, 4, &pc.out_off)};
  const auto gx = static_cast<uint32_t>((dim + 255) / 256);
  for (int64_t t0 = 0; t0 < n; t0 += kMaxGroups) {
    pc.tok0 = static_cast<uint32_t>(t0);
    recorder_->dispatch(p, b, &pc, sizeof(pc), gx, static_cast<uint32_t>(std::min<int64_t>(kMaxGroups, n - t0)));
  }
}

void VulkanDevice::add_rows_scaled(DeviceSpan y, DeviceSpan x, DeviceSpan rows, DeviceSpan scales, int64_t n,
                                   int64_t dim) {
  const Pipeline& p = pipelines_->get("add_rows_scaled", 4);
  struct {
    uint32_t dim, y_off, x_off, rows_off, scales_off, tok0;
  } pc{};
  pc.dim = static_cast<uint32_t>(dim);
  VkDescriptorBufferInfo b[4] = {bind(y, 4, &pc.y_off), bind(x, 4, &pc.x_off), bind(rows, 4, &pc.rows_off),
                                 bind(scales, 4, &pc.scales_off)};
  const auto gx = static_cast<uint32_t>((dim + 255) / 256);
  for (int64_t t0 = 0; t0 < n; t0 += kMaxGroups) {
    pc.tok0 = static_cast<uint32_t>(t0);
    recorder_->dispatch(p, b, &pc, sizeof(pc), gx, static_cast<uint32_t>(std::min<int64_t>(kMaxGroups, n - t0)));
  }
}

}  // namespace kairo::kernels::vulkan
