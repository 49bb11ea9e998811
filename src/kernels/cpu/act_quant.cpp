#include "kernels/cpu/act_quant.h"

#include "kernels/cpu/scratch.h"

namespace kairo::kernels::cpu {

namespace {
int64_t pad512(int64_t n) { return (n + 511) / 512 * 512; }
}  // namespace

size_t act_q8_bytes(int64_t n_cols) {
  const auto n = static_cast<size_t>(pad512(n_cols));
  return n + n + 3 * align_up(n / 32 * 4, 64);  // q, sum4, bsum, d, s
}

ActQ8 act_q8_layout(void* mem, int64_t n_cols) {
  ActQ8 a;
  a.n_cols = n_cols;
  a.n_pad = pad512(n_cols);
  const auto n = static_cast<size_t>(a.n_pad);
  auto* p = static_cast<uint8_t*>(mem);
  a.q = reinterpret_cast<int8_t*>(p);
  a.sum4 = reinterpret_cast<int32_t*>(p + n);
  const size_t per_block = align_up(n / 32 * 4, 64);
  a.bsum = reinterpret_cast<int32_t*>(p + 2 * n);
  a.d = reinterpret_cast<float*>(p + 2 * n + per_block);
  a.s = reinterpret_cast<float*>(p + 2 * n + 2 * per_block);
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
