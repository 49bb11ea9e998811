#pragma once
// The adapters a model serves, on its device: every adapted projection of every layer as two matrices, A [rank, n_in]
// (the shrink) and B [n_out, rank] (the expand), so that a token's delta is B·(scale·(A·x)). They stay in the file's
// type when that is F16 or BF16 (exact, and half the bytes every step reads), else f32 (F32, dequantized Q8_0).
// Adapters are numbered from 1 (model::Batch::adapter_idx; 0 is the base model): add takes the lowest free index, so
// adapters added before serving get 1, 2, ... in order, and an index freed by remove is reused. An adapter may also
// run at another user scale (add_rescaled): a second index over the same matrices, whose pairs carry the scales a
// load at that scale would give them, bit for bit.
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

using PairTable = std::vector<std::array<std::optional<DevicePair>, kNumTargets>>;  // [n_layers][target]

// The type a LoRA matrix stored in the file as `file_type` is kept in on the device: F16 and BF16 as they were
// (exact), anything else (F32, Q8_0) as F32. plan/adapter_memory.h counts adapter bytes with it.
DType device_type(DType file_type);

// What an adapter's indices share: every pair of the file on the device, each with its scale at user scale 1 (pairs
// of scale 0 included, so a rescaled copy of an adapter loaded at scale 0 still has them), and the host copies.
struct AdapterMatrices {
  PairTable pairs;
  float alpha = 0;          // adapter.lora.alpha: a pair's scale at user scale s is effective_scale(alpha, rank, s)
  uint64_t file_hash = 0;   // adapter_file_hash: adapter_identity(file_hash, s) is the identity at scale s
  // The host copies the device matrices were made from (the CPU device reads them in place).
  std::vector<std::vector<uint8_t>> host;
  // Bytes of every A and B in its device type (device_type): what the adapter takes on the device, the number the
  // engine's adapter budget counts (plan::adapter_bytes computes the same from the file's header).
  uint64_t device_bytes = 0;
  // The device's copies (upload_matrices' results it did copy): given back (Device::free_matrices) when the last
  // index sharing these matrices is removed.
  std::vector<kernels::DeviceMatrix> uploaded;
};

struct DeviceAdapter {
  std::string name;     // the adapter's general.name, or its file name
  uint64_t identity = 0;  // adapter_identity(file, user scale): keys the prefix cache
  float user_scale = 1.0f;
  int max_rank = 0;
  // [n_layers][target]: the pairs this adapter has at its user scale (a pair with scale 0 is left out: its delta is
  // exactly zero). A free index has every layer empty.
  PairTable layers;
  std::shared_ptr<const AdapterMatrices> matrices;  // null at a free index
};

// FNV-1a over the adapter file's bytes, then the user scale's bits: two adapters share KV only when both agree.
Result<uint64_t> adapter_identity(const std::string& path, float user_scale);
// The two halves of it: the file's bytes, then the scale's bits on top.
Result<uint64_t> adapter_file_hash(const std::string& path);
uint64_t adapter_identity(uint64_t file_hash, float user_scale);

// The host half of LoraSet::add, which any thread may do (the engine does it on the loading request's thread, so that
// its steps wait only for the upload): every pair's matrices in the type the device keeps them in, fused ones cut by
// part, and the file's hash.
struct PreparedAdapter {
  struct Pair {
    int layer;
    LoraTarget target;
    int rank;
    size_t a_view, b_view;  // into views
  };
  std::string name;
  float user_scale = 1.0f;
  int n_layers = 0;
  std::vector<kernels::MatrixView> views;  // into matrices->host
  std::vector<Pair> pairs;
  std::shared_ptr<AdapterMatrices> matrices;  // pairs not set yet
};
Result<PreparedAdapter> prepare_adapter(const Adapter& adapter, const ModelConfig& config);

class LoraSet {
 public:
  // Uploads `adapter` (read against this model's config) to `device`; returns its index, the lowest free one.
  Result<int> add(const Adapter& adapter, const ModelConfig& config, kernels::Device& device);
  // The same in two halves: prepare_adapter, then this (the upload).
  Result<int> add(PreparedAdapter prepared, kernels::Device& device);
  // The adapter at `source` at another user scale, over the same device matrices (nothing is uploaded), at the
  // lowest free index from `first_idx` on; returns that index. Its pairs' scales and its identity are those
  // add(the same file at user_scale) gives.
  int add_rescaled(int source, float user_scale, int first_idx);
  // Frees index idx; with the last index that shares its matrices go their host copies and the device's copies
  // (Device::free_matrices on the device add uploaded them to). Not while a step runs. Later adds reuse the index.
  void remove(int idx);

  // The highest index in use or freed: indices run from 1 to size(), some of them possibly free.
  int size() const { return static_cast<int>(adapters_.size()); }
  bool empty() const { return adapters_.empty(); }
  bool in_use(int idx) const {
    return idx >= 1 && idx <= size() && adapters_[static_cast<size_t>(idx - 1)]->matrices != nullptr;
  }
  int n_in_use() const;
  // idx from 1 to size() (a free index reads as an adapter without pairs).
  const DeviceAdapter& at(int idx) const { return *adapters_[static_cast<size_t>(idx - 1)]; }
  // The largest rank of any adapter added so far (sizes the step's scratch).
  int max_rank() const { return max_rank_; }

 private:
  int place(std::unique_ptr<DeviceAdapter> adapter, int first_idx);

  std::vector<std::unique_ptr<DeviceAdapter>> adapters_;
  kernels::Device* device_ = nullptr;  // where add uploaded (one device per set: the model's)
  int n_layers_ = 0;
  int max_rank_ = 0;
};

}  // namespace kairo::model::lora
