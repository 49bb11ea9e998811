#pragma once
// Activations quantized to int8 blocks of 32 (one float scale per block, like Q8_0 but with an f32 scale and the
// block's float sum), in the two layouts the integer matmul kernels read. Built once per matmul, then shared by
// every weight row, so its cost is amortized over all output features.
#include <cstddef>
#include <cstdint>

namespace kairo::kernels::cpu {

inline constexpr int kActBlock = 32;
inline constexpr int kTileTokens = 16;  // tokens per GEMM tile (AMX B tile: 16 columns of 4-byte groups)
inline constexpr int kMxfp4ZeroPoint = 12;  // MXFP4 row tiles' values are stored + 12 (decode_avx512.h)

// One token for the GEMV kernels. Lanes are the 4-byte groups that vpdpbusd sums into one int32. Zero-padded to a
// multiple of 512 columns so kernels can read whole vectors past the last block.
struct ActQ8 {
  int64_t n_cols = 0;
  int64_t n_pad = 0;
  int8_t* q = nullptr;        // [n_pad] x / d rounded, in column order
  int32_t* sum4 = nullptr;    // [n_pad / 4] sum of each 4 consecutive q (a vpdpbusd lane; zero-point corrections)
  int32_t* bsum = nullptr;    // [n_pad / 32] sum of each block's q (zero-point corrections)
  // [n_pad / 32] -8 / -128 / -12 x bsum: the zero-point corrections of Q4_0 / Q8_0 / MXFP4 row tiles (values
  // stored + 8 / + 128 / + 12), ready for one broadcast load per block (computing them per block and token cost the
  // kernels ~10 %).
  int32_t* zero_point_q4 = nullptr;
  int32_t* zero_point_q8 = nullptr;
  int32_t* zero_point_mxfp4 = nullptr;
  float* d = nullptr;         // [n_pad / 32] block scales
  float* s = nullptr;         // [n_pad / 32] float sums of x over each block (for weight mins)
};

inline int64_t act_q8_padded_cols(int64_t n_cols) { return (n_cols + 511) / 512 * 512; }
inline size_t act_q8_bytes(int64_t n_cols) {
  const auto n = static_cast<size_t>(act_q8_padded_cols(n_cols));
  return n + n + 6 * ((n / 32 * 4 + 63) / 64 * 64);  // q, sum4, bsum, the three zero points, d, s
}
inline ActQ8 act_q8_layout(void* mem, int64_t n_cols) {
  ActQ8 a;
  a.n_cols = n_cols;
  a.n_pad = act_q8_padded_cols(n_cols);
  const auto n = static_cast<size_t>(a.n_pad);
  const size_t per_block = (n / 32 * 4 + 63) / 64 * 64;
  auto* p = static_cast<uint8_t*>(mem);
  a.q = reinterpret_cast<int8_t*>(p);
  a.sum4 = reinterpret_cast<int32_t*>(p + n);
  a.bsum = reinterpret_cast<int32_t*>(p + 2 * n);
  a.zero_point_q4 = reinterpret_cast<int32_t*>(p + 2 * n + per_block);
  a.zero_point_q8 = reinterpret_cast<int32_t*>(p + 2 * n + 2 * per_block);
  a.zero_point_mxfp4 = reinterpret_cast<int32_t*>(p + 2 * n + 3 * per_block);
  a.d = reinterpret_cast<float*>(p + 2 * n + 4 * per_block);
  a.s = reinterpret_cast<float*>(p + 2 * n + 5 * per_block);
  return a;
}

// Many tokens for the AMX row-tile GEMM, quantized straight into AMX A-tile order and padded with zero tokens
// (q = 0, d = 0) to a multiple of 16: per 16-token tile and block, the q of the 16 tokens as one contiguous A tile
// ([n_padded / 16][n_cols / 32][16 tokens][32]) and their scales ([..][..][16]) for one broadcast load per token and
// block in the GEMM's scaling step. Each token's q and d are exactly quantize_act_q8's.
struct ActQ8Batch {
  int64_t n_cols = 0;
  int64_t n_tokens = 0;
  int64_t n_padded = 0;
  int8_t* tile_q = nullptr;
  float* tile_d = nullptr;

  const int8_t* tile_q_of(int64_t t0) const { return tile_q + t0 / 16 * (n_cols / 32) * 512; }
  const float* tile_d_of(int64_t t0) const { return tile_d + t0 / 16 * (n_cols / 32) * 16; }
};
size_t act_q8_batch_bytes(int64_t n_cols, int64_t n_tokens);
ActQ8Batch act_q8_batch_layout(void* mem, int64_t n_cols, int64_t n_tokens);

// Many tokens for the GEMM kernels, in tiles of 16 tokens laid out as AMX B tiles / VNNI broadcast operands:
// for tile t and block b, 512 bytes [k4 = 0..7][token 0..15][4 consecutive columns]. Padding tokens have d = s = 0.
struct ActTiles {
  int64_t n_cols = 0;
  int64_t n_blocks = 0;
  int64_t n_tokens = 0;
  int64_t n_tiles = 0;
  uint8_t* q = nullptr;  // [n_tiles][n_blocks][8][16][4]; int8, or int8 + 128 when quantized for VNNI (u8)
  float* d = nullptr;    // [n_tiles][n_blocks][16]
  float* s = nullptr;    // [n_tiles][n_blocks][16]

  const uint8_t* q_at(int64_t tile, int64_t block) const { return q + (tile * n_blocks + block) * 512; }
  const float* d_at(int64_t tile, int64_t block) const { return d + (tile * n_blocks + block) * kTileTokens; }
  const float* s_at(int64_t tile, int64_t block) const { return s + (tile * n_blocks + block) * kTileTokens; }
};

size_t act_tiles_bytes(int64_t n_cols, int64_t n_tokens);
ActTiles act_tiles_layout(void* mem, int64_t n_cols, int64_t n_tokens);

}  // namespace kairo::kernels::cpu

namespace kairo::kernels::cpu {
namespace {  // internal linkage: each ISA's file compiles its own copy with its own flags

// The block loop of every ISA's quantize_act_q8: quantize_block(x, q, d, s) for each block of x, zeros for the
// padding blocks up to n_pad.
template <typename BlockFn>
inline void quantize_blocks(const float* x, ActQ8& a, BlockFn&& quantize_block) {
  const int64_t nb = a.n_cols / kActBlock, nb_pad = a.n_pad / kActBlock;
  for (int64_t b = 0; b < nb_pad; ++b) {
    if (b < nb) {
      quantize_block(x + b * 32, a.q + 32 * b, a.d + b, a.s + b);
    } else {
      for (int i = 0; i < 32; ++i) a.q[32 * b + i] = 0;
      a.d[b] = a.s[b] = 0.0f;
    }
  }
}

// The zero-point corrections from the block sums (ActQ8::zero_point_*).
inline void fill_zero_points(ActQ8& a) {
  for (int64_t b = 0; b < a.n_pad / kActBlock; ++b) {
    a.zero_point_q4[b] = -8 * a.bsum[b];
    a.zero_point_q8[b] = -128 * a.bsum[b];
    a.zero_point_mxfp4[b] = -kMxfp4ZeroPoint * a.bsum[b];
  }
}

}  // namespace
}  // namespace kairo::kernels::cpu

namespace kairo::kernels::avx512 {
// Quantizes x[n_cols] (n_cols a multiple of 32). Per block exactly as quantize_act_tiles, so one token gets the
// same int8 values and scales in either path.
void quantize_act_q8(const float* x, cpu::ActQ8& a);
// Quantizes token t of the batch (x: its n_cols floats; nullptr: a padding token, all zeros) into its tile slots.
void quantize_act_q8_batch_token(const float* x, int64_t t, const cpu::ActQ8Batch& a);
// Quantizes tokens [t0, t1) of x[n_tokens, n_cols] into their tiles; `as_unsigned` stores q + 128 (for vpdpbusd,
// whose first operand is unsigned). t0 and t1 are multiples of 16: whole tiles, including padding tokens.
void quantize_act_tiles(const float* x, int64_t t0, int64_t t1, bool as_unsigned, cpu::ActTiles& a);
}  // namespace kairo::kernels::avx512

namespace kairo::kernels::avx2 {
// As avx512::quantize_act_q8, bit for bit, with AVX2.
void quantize_act_q8(const float* x, cpu::ActQ8& a);
}  // namespace kairo::kernels::avx2

namespace kairo::kernels::neon {
// As avx512::quantize_act_q8, bit for bit, with NEON.
void quantize_act_q8(const float* x, cpu::ActQ8& a);
}  // namespace kairo::kernels::neon
