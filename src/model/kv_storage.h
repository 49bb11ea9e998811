#pragma once
// The KV tensors: per layer, K and V for n_blocks × block_size token slots. Which slots belong to whom is decided
// elsewhere (kv/ bookkeeping); this only owns the memory.
#include <cstdint>
#include <vector>

#include "core/result.h"
#include "kernels/backend.h"
#include "model/config.h"

namespace kairo::model {

class KvStorage {
 public:
  static Result<KvStorage> create(const ModelConfig& config, int64_t n_blocks, int block_size, DType dtype);
  static uint64_t bytes_per_token(const ModelConfig& config, DType dtype);

  kernels::KvLayerView layer(int l) {
    return kernels::KvLayerView{k_[l].data(), v_[l].data(), dtype_, n_kv_heads_, head_dim_, block_size_};
  }
  int64_t n_blocks() const { return n_blocks_; }
  int block_size() const { return block_size_; }
  DType dtype() const { return dtype_; }
  uint64_t n_bytes() const { return n_bytes_; }
  // Copies the contents of one block to another in every layer (copy-on-write for forked sequences).
  void copy_block(int64_t src, int64_t dst);

 private:
  std::vector<std::vector<uint8_t>> k_, v_;
  DType dtype_ = DType::F16;
  int64_t n_blocks_ = 0;
  int block_size_ = 16;
  int n_kv_heads_ = 0;
  int head_dim_ = 0;
  uint64_t n_bytes_ = 0;
};

}  // namespace kairo::model
