#include "kernels/cpu/act_quant.h"

#include <cstring>

#include "kernels/cpu/scratch.h"

namespace kairo::kernels::cpu {

size_t act_q8_batch_bytes(int64_t n_cols, int64_t n_tokens) {
  const auto padded = static_cast<size_t>((n_tokens + kTileTokens - 1) / kTileTokens * kTileTokens);
  return padded * static_cast<size_t>(n_cols) + padded * static_cast<size_t>(n_cols / kActBlock) * sizeof(float);
}

ActQ8Batch act_q8_batch_layout(void* mem, int64_t n_cols, int64_t n_tokens) {
  ActQ8Batch a;
  a.n_cols = n_cols;
  a.n_tokens = n_tokens;
  a.n_padded = (n_tokens + kTileTokens - 1) / kTileTokens * kTileTokens;
  a.tile_q = static_cast<int8_t*>(mem);
  a.tile_d = reinterpret_cast<float*>(static_cast<uint8_t*>(mem) + a.n_padded * n_cols);
  return a;
}

size_t act_tiles_bytes(int64_t n_cols, int64_t n_tokens) {
  const auto n_blocks = static_cast<size_t>(n_cols / kActBlock);
  const auto n_tiles = static_cast<size_t>((n_tokens + kTileTokens - 1) / kTileTokens);
  return n_tiles * n_blocks * (512 + 2 * kTileTokens * sizeof(float));
}

ActTiles act_tiles_layout(void* mem, int64_t n_cols, int64_t n_tokens) {
  ActTiles a;
  a.n_cols = n_cols;
  a.n_blocks = n_cols / kActBlock;
  a.n_tokens = n_tokens;
  a.n_tiles = (n_tokens + kTileTokens - 1) / kTileTokens;
  const auto cells = static_cast<size_t>(a.n_tiles * a.n_blocks);
  auto* p = static_cast<uint8_t*>(mem);
  a.q = p;
  a.d = reinterpret_cast<float*>(p + cells * 512);
  a.s = a.d + cells * kTileTokens;
  return a;
}

}  // namespace kairo::kernels::cpu
