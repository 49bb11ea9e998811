#include "model/lora/lora_set.h"

#include <algorithm>
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

DType device_type(DType file_type) {
  return file_type == DType::F16 || file_type == DType::BF16 ? file_type : DType::F32;
}

Result<uint64_t> adapter_file_hash(const std::string& path) {
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
  return h;
}

uint64_t adapter_identity(uint64_t file_hash, float user_scale) {
  uint32_t bits = 0;
  std::memcpy(&bits, &user_scale, sizeof bits);
  uint64_t h = file_hash;
  for (int i = 0; i < 4; ++i) h = (h ^ ((bits >> (8 * i)) & 0xff)) * 0x100000001b3ULL;
  return h;
}

Result<uint64_t> adapter_identity(const std::string& path, float user_scale) {
  KAIRO_TRY_ASSIGN(const uint64_t file_hash, adapter_file_hash(path));
  return adapter_identity(file_hash, user_scale);
}

namespace {

// The pairs of `matrices` at user scale `user_scale`: each pair's scale as a load at that scale computes it, the
// pairs whose scale is then 0 left out.
PairTable scaled_pairs(const AdapterMatrices& matrices, float user_scale, int& max_rank) {
  PairTable out(matrices.pairs.size());
  max_rank = 0;
  for (size_t l = 0; l < matrices.pairs.size(); ++l) {
    for (size_t t = 0; t < static_cast<size_t>(kNumTargets); ++t) {
      const std::optional<DevicePair>& p = matrices.pairs[l][t];
      if (!p) continue;
      const float scale = effective_scale(matrices.alpha, p->rank, user_scale);
      if (scale == 0.0f) continue;  // exactly the base: no delta at all
      out[l][t] = DevicePair{p->a, p->b, p->rank, scale};
      max_rank = std::max(max_rank, p->rank);
    }
  }
  return out;
}

}  // namespace

Result<PreparedAdapter> prepare_adapter(const Adapter& adapter, const ModelConfig& config) {
  PreparedAdapter out;
  out.name = adapter.name;
  out.user_scale = adapter.user_scale;
  out.n_layers = config.n_layers;
  auto matrices = std::make_shared<AdapterMatrices>();
  matrices->alpha = adapter.alpha;
  matrices->pairs.resize(static_cast<size_t>(config.n_layers));
  KAIRO_TRY_ASSIGN(matrices->file_hash, adapter_file_hash(adapter.path));

  // A as read, B cut by fused part. Every pair, even one of scale 0 at this user scale: a rescaled copy may need it.
  std::vector<std::vector<uint8_t>>& host = matrices->host;
  for (const LoraWeight& w : adapter.weights) {
    if (w.layer < 0 || w.layer >= config.n_layers) return Error{"internal: adapter pair without a layer: " + w.base_name};
    const std::vector<Part> parts = parts_of(w.slot, config);
    if (parts.empty()) return Error{"internal: adapter pair for a slot the decoder does not adapt: " + w.base_name};
    const DType a_type = device_type(w.a_type), b_type = device_type(w.b_type);
    host.push_back(encode(w.a, a_type));
    matrices->device_bytes += host.back().size();
    const size_t a_view = out.views.size();
    out.views.push_back(view_of(host.back().data(), a_type, w.rank, w.n_in));
    host.push_back(encode(w.b, b_type));
    matrices->device_bytes += host.back().size();
    const uint8_t* b_data = host.back().data();
    const size_t b_row_bytes = static_cast<size_t>(w.rank) * (b_type == DType::F32 ? 4 : 2);
    int64_t row0 = 0;
    for (const Part& p : parts) {
      out.pairs.push_back({w.layer, p.target, w.rank, a_view, out.views.size()});
      out.views.push_back(view_of(b_data + static_cast<size_t>(row0) * b_row_bytes, b_type, p.rows, w.rank));
      row0 += p.rows;
    }
    if (row0 != w.n_out) {
      return Error{strprintf("internal: %s has %lld output rows, the model's parts %lld", w.base_name.c_str(),
                             static_cast<long long>(w.n_out), static_cast<long long>(row0))};
    }
  }
  out.matrices = std::move(matrices);  // the views point into its host copies, which a move leaves in place
  return out;
}

Result<int> LoraSet::add(const Adapter& adapter, const ModelConfig& config, kernels::Device& device) {
  KAIRO_TRY_ASSIGN(PreparedAdapter prepared, prepare_adapter(adapter, config));
  return add(std::move(prepared), device);
}

Result<int> LoraSet::add(PreparedAdapter prepared, kernels::Device& device) {
  std::shared_ptr<AdapterMatrices>& matrices = prepared.matrices;
  KAIRO_TRY_ASSIGN(const std::vector<kernels::DeviceMatrix> on_device, device.upload_matrices(prepared.views));
  device_ = &device;
  bool host_in_use = false;
  for (size_t i = 0; i < prepared.views.size(); ++i) {
    const bool copied = on_device[i].span.ptr != prepared.views[i].data;
    host_in_use |= !copied;
    if (copied) matrices->uploaded.push_back(on_device[i]);
  }
  if (!host_in_use) matrices->host.clear();  // the device has its own copies
  for (const PreparedAdapter::Pair& p : prepared.pairs) {
    auto& slot = matrices->pairs[static_cast<size_t>(p.layer)][static_cast<size_t>(p.target)];
    slot = DevicePair{on_device[p.a_view], on_device[p.b_view], p.rank, effective_scale(matrices->alpha, p.rank, 1.0f)};
  }
  n_layers_ = prepared.n_layers;
  auto out = std::make_unique<DeviceAdapter>();
  out->name = std::move(prepared.name);
  out->user_scale = prepared.user_scale;
  out->identity = adapter_identity(matrices->file_hash, prepared.user_scale);
  out->layers = scaled_pairs(*matrices, prepared.user_scale, out->max_rank);
  out->matrices = std::move(matrices);
  return place(std::move(out), 1);
}

int LoraSet::add_rescaled(int source, float user_scale, int first_idx) {
  const DeviceAdapter& from = at(source);
  auto out = std::make_unique<DeviceAdapter>();
  out->name = from.name;
  out->user_scale = user_scale;
  out->identity = adapter_identity(from.matrices->file_hash, user_scale);
  out->layers = scaled_pairs(*from.matrices, user_scale, out->max_rank);
  out->matrices = from.matrices;
  return place(std::move(out), first_idx);
}

void LoraSet::remove(int idx) {
  std::shared_ptr<const AdapterMatrices> matrices = std::move(adapters_[static_cast<size_t>(idx - 1)]->matrices);
  auto empty = std::make_unique<DeviceAdapter>();
  empty->layers.resize(static_cast<size_t>(n_layers_));
  adapters_[static_cast<size_t>(idx - 1)] = std::move(empty);
  if (matrices == nullptr || device_ == nullptr) return;
  // A scaled copy (add_rescaled) of this adapter still reads them: they go with the last index.
  for (const auto& a : adapters_) {
    if (a->matrices == matrices) return;
  }
  device_->free_matrices(matrices->uploaded);
}

int LoraSet::n_in_use() const {
  int n = 0;
  for (int idx = 1; idx <= size(); ++idx) n += in_use(idx) ? 1 : 0;
  return n;
}

int LoraSet::place(std::unique_ptr<DeviceAdapter> adapter, int first_idx) {
  max_rank_ = std::max(max_rank_, adapter->max_rank);
  int idx = std::max(first_idx, 1);
  while (in_use(idx)) ++idx;
  while (size() < idx) {  // indices skipped to reach first_idx stay free
    auto empty = std::make_unique<DeviceAdapter>();
    empty->layers.resize(static_cast<size_t>(n_layers_));
    adapters_.push_back(std::move(empty));
  }
  adapters_[static_cast<size_t>(idx - 1)] = std::move(adapter);
  return idx;
}

}  // namespace kairo::model::lora
