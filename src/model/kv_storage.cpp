#include "model/kv_storage.h"

#include <cstring>
#include <new>

#include "core/bulk_memory.h"
#include "core/format.h"

namespace kairo::model {

uint64_t KvStorage::bytes_per_token(const ModelConfig& c, DType dtype) {
  return 2ull * static_cast<uint64_t>(c.n_layers) * row_bytes(dtype, c.kv_dim());
}

Result<KvStorage> KvStorage::create(const ModelConfig& c, int64_t n_blocks, int block_size, DType dtype) {
  if (dtype != DType::F16 && dtype != DType::BF16 && dtype != DType::F32 && dtype != DType::Q8_0) {
    return Error{strprintf("KV cache dtype %s is not supported (use f16, bf16, q8_0 or f32)",
                           std::string(dtype_name(dtype)).c_str())};
  }
  if (dtype == DType::Q8_0 && c.head_dim % 32 != 0) {
    return Error{strprintf("a Q8_0 KV cache needs a head size that is a multiple of 32, this model's is %d; use f16",
                           c.head_dim)};
  }
  if (n_blocks <= 0 || block_size <= 0) return Error{"KV cache needs at least one block"};
  KvStorage s;
  s.dtype_ = dtype;
  s.n_blocks_ = n_blocks;
  s.block_size_ = block_size;
  s.n_kv_heads_ = c.n_kv_heads;
  s.head_dim_ = c.head_dim;
  const size_t layer_bytes = static_cast<size_t>(n_blocks) * block_size * row_bytes(dtype, c.kv_dim());
  s.layer_bytes_ = layer_bytes;
  s.n_bytes_ = 2ull * c.n_layers * layer_bytes;
  try {
    for (int l = 0; l < c.n_layers; ++l) {
      for (auto* side : {&s.k_, &s.v_}) {
        side->push_back(allocate_bulk(layer_bytes));
        // Written now, not on first use: the pool's memory is committed at startup, where a shortage is reported,
        // rather than faulted in mid-request.
        std::memset(side->back().get(), 0, layer_bytes);
      }
    }
  } catch (const std::bad_alloc&) {
    return Error{strprintf("cannot allocate the KV cache (%.2f GiB): lower --kv-cache-memory or --mem-budget-gb",
                           static_cast<double>(s.n_bytes_) / (1ull << 30))};
  }
  return s;
}

void KvStorage::copy_block(int64_t src, int64_t dst) {
  const size_t block_bytes = layer_bytes_ / static_cast<size_t>(n_blocks_);
  for (auto* side : {&k_, &v_}) {
    for (auto& layer : *side) {
      auto* base = static_cast<uint8_t*>(layer.get());
      std::memcpy(base + dst * block_bytes, base + src * block_bytes, block_bytes);
    }
  }
}

}  // namespace kairo::model
