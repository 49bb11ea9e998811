#pragma once
// Activations quantized to int8 blocks of 32 (one float scale per block, like Q8_0 but with an f32 scale and the
// block's float sum), in the two layouts the integer matmul kernels read. Built once per matmul, then shared by
// every weight row, so its cost is amortized over all output features.
#include <cstddef>
#include <cstdint>

namespace kairo::kernels::cpu {

inline constexpr int kActBlock = 32;
inline constexpr int kTileTokens = 16;  // tokens per GEMM tile (AMX B tile: 16 columns of 4-byte groups)

// One token for the GEMV kernels. Lanes are the 4-byte groups that vpdpbusd sums into one int32. Zero-padded to a
// multiple of 512 columns so kernels can read whole vectors past the last block.
struct ActQ8 {
  int64_t n_cols = 0;
  int64_t n_pad = 0;
  // [n_pad] x / d rounded: in column order, or (interleaved, for the packed weight layouts) per 512 columns
  // [k = 0..7][block 0..15][4]: byte 64k + 4j + i holds column 32j + 4k + i, so one vpdpbusd lane = one block.
  int8_t* q = nullptr;
  int32_t* sum4 = nullptr;    // [n_pad / 4] column order only: sum of each lane's 4 values (zero-point corrections)
  int32_t* bsum = nullptr;    // [n_pad / 32] interleaved only: sum of each block's q (zero-point corrections)
  float* d = nullptr;         // [n_pad / 32] block scales
  float* s = nullptr;         // [n_pad / 32] float sums of x over each block (for weight mins)
};

size_t act_q8_bytes(int64_t n_cols);
ActQ8 act_q8_layout(void* mem, int64_t n_cols);

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

namespace kairo::kernels::avx512 {
// Quantizes x[n_cols] (n_cols a multiple of 32); `interleaved` picks the q layout (see ActQ8). Per block exactly
// as quantize_act_tiles, so one token gets the same int8 values and scales in either path.
void quantize_act_q8(const float* x, bool interleaved, cpu::ActQ8& a);
// Quantizes tokens [t0, t1) of x[n_tokens, n_cols] into their tiles; `as_unsigned` stores q + 128 (for vpdpbusd,
// whose first operand is unsigned). t0 and t1 are multiples of 16: whole tiles, including padding tokens.
void quantize_act_tiles(const float* x, int64_t t0, int64_t t1, bool as_unsigned, cpu::ActTiles& a);
}  // namespace kairo::kernels::avx512
