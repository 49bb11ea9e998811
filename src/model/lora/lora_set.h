#pragma once
// The adapters a model serves, on its device: every adapted projection of every layer as two matrices, A [rank, n_in]
// (the shrink) and B [n_out, rank] (the expand), so that a token's delta is B·(scale·(A·x)). They stay in the file's
// type when that is F16 or BF16 (exact, and half the bytes every step reads), else f32 (F32, dequantized Q8_0).
// Adapters are numbered from 1 in the order they were added; 0 is the base model (model::Batch::adapter_idx).
// Fused base tensors (phi3's attn_qkv, gate‖up ffn_up) are split like the base weights: one A, B cut by rows.
#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"
#include "kernels/device.h"
#include "model/config.h"
#include "model/lora/adapter.h"

namespace kairo::model::lora {

// The projections the decoder adds a delta to.
enum class LoraTarget { Q, K, V, O, Gate, Up, Down };
inline constexpr int kNumTargets = 7;

struct DevicePair {
  kernels::DeviceMatrix a;  // [rank, n_in]
  kernels::DeviceMatrix b;  // [n_out, rank]
  int rank = 0;
  float scale = 0;          // the pair's effective scale (never 0: such pairs are left out)
};

struct DeviceAdapter {
  std::string name;     // the adapter's general.name, or its file name
  uint64_t identity = 0;  // adapter_identity(file, user scale): keys the prefix cache
  int max_rank = 0;
  // [n_layers][target]: the pairs this adapter has (a pair with scale 0 is left out: its delta is exactly zero).
  std::vector<std::array<std::optional<DevicePair>, kNumTargets>> layers;
  // The host copies the device matrices were made from (the CPU device reads them in place).
  std::vector<std::vector<uint8_t>> host;
};

// FNV-1a over the adapter file's bytes, then the user scale's bits: two adapters share KV only when both agree.
Result<uint64_t> adapter_identity(const std::string& path, float user_scale);

class LoraSet {
 public:
  // Uploads `adapter` (read against this model's config) to `device`; returns its index (1, 2, ...).
  Result<int> add(const Adapter& adapter, const ModelConfig& config, kernels::Device& device);

  int size() const { return static_cast<int>(adapters_.size()); }
  bool empty() const { return adapters_.empty(); }
  // idx from 1 to size().
  const DeviceAdapter& at(int idx) const { return *adapters_[static_cast<size_t>(idx - 1)]; }
  // The largest rank of any adapter (sizes the step's scratch).
  int max_rank() const { return max_rank_; }

 private:
  std::vector<std::unique_ptr<DeviceAdapter>> adapters_;
  int max_rank_ = 0;
};

}  // namespace kairo::model::lora
