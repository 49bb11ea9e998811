#include "model/lora/lora_set.h"

#include <cstdio>
#include <cstring>

#include "core/format.h"
#include "core/half.h"

namespace kairo::model::lora {
namespace {

// The decoder's projections a base slot feeds, with each one's rows of the (possibly fused) output.
struct Part {
  LoraTarget target;
  int64_t rows;
};

std::vector<Part> parts_of(TensorSlot slot, const ModelConfig& c) {
  switch (slot) {
    case TensorSlot::Q: return {{LoraTarget::Q, c.q_dim()}};
    case TensorSlot::K: return {{LoraTarget::K, c.kv_dim()}};
    case TensorSlot::V: return {{LoraTarget::V, c.kv_dim()}};
    case TensorSlot::Qkv: return {{LoraTarget::Q, c.q_dim()}, {LoraTarget::K, c.kv_dim()}, {LoraTarget::V, c.kv_dim()}};
    case TensorSlot::AttnOutput: return {{LoraTarget::O, c.dim}};
    case TensorSlot::Gate: return {{LoraTarget::Gate, c.ffn_dim}};
    case TensorSlot::Up: return {{LoraTarget::Up, c.ffn_dim}};
    case TensorSlot::GateUp: return {{LoraTarget::Gate, c.ffn_dim}, {LoraTarget::Up, c.ffn_dim}};
    case TensorSlot::Down: return {{LoraTarget::Down, c.dim}};
    default: return {};
  }
}

// The type a matrix read from `file_type` is kept in on the device: F16 and BF16 as they were (exact), else F32.
DType kept_type(DType file_type) { return file_type == DType::F16 || file_type == DType::BF16 ? file_type : DType::F32; }

std::vector<uint8_t> encode(const std::vector<float>& values, DType type) {
  const size_t elem = type == DType::F32 ? 4 : 2;
  std::vector<uint8_t> out(values.size() * elem);
  for (size_t i = 0; i < values.size(); ++i) {
    if (type == DType::F32) {
      std::memcpy(out.data() + 4 * i, &values[i], 4);
    } else {
      const uint16_t h = type == DType::F16 ? f32_to_f16(values[i]) : f32_to_bf16(values[i]);
      std::memcpy(out.data() + 2 * i, &h, 2);
    }
  }
  return out;
}

kernels::MatrixView view_of(const uint8_t* data, DType type, int64_t n_rows, int64_t n_cols) {
  kernels::MatrixView v;
  v.dtype = type;
  v.data = data;
  v.n_rows = n_rows;
  v.n_cols = n_cols;
  v.row_bytes = static_cast<size_t>(n_cols) * (type == DType::F32 ? 4 : 2);
  return v;
}

}  // namespace

Result<uint64_t> adapter_identity(const std::string& path, float user_scale) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return Error{strprintf("%s: cannot read the adapter file: %s", path.c_str(), std::strerror(errno))};
  uint64_t h = 0xcbf29ce484222325ULL;
  std::vector<unsigned char> buf(1 << 20);
  size_t n = 0;
  while ((n = std::fread(buf.data(), 1, buf.size(), f)) > 0) {
    for (size_t i = 0; i < n; ++i) h = (h ^ buf[i]) * 0x100000001b3ULL;
  }
  const bool failed = std::ferror(f) != 0;
  std::fclose(f);
  if (failed) return Error{strprintf("%s: error while reading the adapter file", path.c_str())};
  uint32_t bits = 0;
  std::memcpy(&bits, &user_scale, sizeof bits);
  for (int i = 0; i < 4; ++i) h = (h ^ ((bits >> (8 * i)) & 0xff)) * 0x100000001b3ULL;
  return h;
}

Result<int> LoraSet::add(const Adapter& adapter, const ModelConfig& config, kernels::Device& device) {
  auto out = std::make_unique<DeviceAdapter>();
  out->name = adapter.name;
  out->layers.resize(static_cast<size_t>(config.n_layers));
  KAIRO_TRY_ASSIGN(out->identity, adapter_identity(adapter.path, adapter.user_scale));

  // Host matrices first (A as read, B times its scale and cut by fused part), then one upload for all of them.
  struct Pending {
    int layer;
    LoraTarget target;
    int rank;
    float scale;
    size_t a_view, b_view;
  };
  std::vector<kernels::MatrixView> views;
  std::vector<Pending> pending;
  for (const LoraWeight& w : adapter.weights) {
    if (w.scale == 0.0f) continue;  // exactly the base: no delta at all
    if (w.layer < 0 || w.layer >= config.n_layers) return Error{"internal: adapter pair without a layer: " + w.base_name};
    const std::vector<Part> parts = parts_of(w.slot, config);
    if (parts.empty()) return Error{"internal: adapter pair for a slot the decoder does not adapt: " + w.base_name};
    const DType a_type = kept_type(w.a_type), b_type = kept_type(w.b_type);
    out->host.push_back(encode(w.a, a_type));
    const size_t a_view = views.size();
    views.push_back(view_of(out->host.back().data(), a_type, w.rank, w.n_in));
    out->host.push_back(encode(w.b, b_type));
    const uint8_t* b_data = out->host.back().data();
    const size_t b_row_bytes = static_cast<size_t>(w.rank) * (b_type == DType::F32 ? 4 : 2);
    int64_t row0 = 0;
    for (const Part& p : parts) {
      pending.push_back({w.layer, p.target, w.rank, w.scale, a_view, views.size()});
      views.push_back(view_of(b_data + static_cast<size_t>(row0) * b_row_bytes, b_type, p.rows, w.rank));
      row0 += p.rows;
    }
    if (row0 != w.n_out) {
      return Error{strprintf("internal: %s has %lld output rows, the model's parts %lld", w.base_name.c_str(),
                             static_cast<long long>(w.n_out), static_cast<long long>(row0))};
    }
    out->max_rank = std::max(out->max_rank, w.rank);
  }
  KAIRO_TRY_ASSIGN(const std::vector<kernels::DeviceMatrix> on_device, device.upload_matrices(views));
  bool host_in_use = false;
  for (size_t i = 0; i < views.size(); ++i) host_in_use |= on_device[i].span.ptr == views[i].data;
  if (!host_in_use) out->host.clear();  // the device has its own copies
  for (const Pending& p : pending) {
    auto& slot = out->layers[static_cast<size_t>(p.layer)][static_cast<size_t>(p.target)];
    slot = DevicePair{on_device[p.a_view], on_device[p.b_view], p.rank, p.scale};
  }
  max_rank_ = std::max(max_rank_, out->max_rank);
  adapters_.push_back(std::move(out));
  return size();
}

}  // namespace kairo::model::lora
