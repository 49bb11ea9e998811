#pragma once
// The loops `bench roofline` times, one ISA per file (roofline_avx2.cpp, roofline_avx512.cpp, roofline_amx.cpp,
// roofline_neon.cpp, roofline_neondot.cpp); each exists only in builds for its architecture.
// Each returns a value computed from what it read or multiplied, so the compiler cannot drop the work and tests
// can check the loop did exactly the work it claims.
#include <cstddef>
#include <cstdint>

namespace kairo::bench::roofline_kernels {

// Sum of n 64-bit words (n a multiple of 32; p 64-byte aligned), read with 512-bit / 256-bit loads: a plain
// streaming read (the method of ../shared/BASELINES.md, so percentages stay comparable with it).
uint64_t read_sum_avx512(const uint64_t* p, size_t n);
uint64_t read_sum_avx2(const uint64_t* p, size_t n);
// The same read with every line also prefetched kReadPrefetchBytes ahead, as the decode kernels do: on this
// machine kind 10-15 % above the plain read, so a decode kernel that prefetches can exceed the plain figure.
inline constexpr int kReadPrefetchBytes = 2048;
uint64_t read_sum_prefetch_avx512(const uint64_t* p, size_t n);
uint64_t read_sum_prefetch_avx2(const uint64_t* p, size_t n);
uint64_t read_sum_neon(const uint64_t* p, size_t n);
uint64_t read_sum_prefetch_neon(const uint64_t* p, size_t n);

// `iters` rounds of 12 independent vpdpbusd (u8 × s8 -> i32, 64 products each) with every byte of the first
// operand `a` and the second `b`. Returns the sum over all accumulator lanes: iters × 12 × 64 × a × b (mod 2^32
// per lane). Work: iters × 12 × 64 multiply-adds.
int64_t int8_dot_vnni(int64_t iters, uint8_t a, int8_t b);
// Same with AVX2 vpmaddubsw + vpmaddwd (no VNNI): iters × 12 × 32 multiply-adds.
int64_t int8_dot_avx2(int64_t iters, uint8_t a, int8_t b);
// Same with AVX-VNNI vpdpbusd on ymm (only on CPUs with AVX-VNNI): iters × 12 × 32 multiply-adds.
int64_t int8_dot_avxvnni(int64_t iters, uint8_t a, int8_t b);
// NEON without SDOT: SMULL/SMLAL into 16 bits, widened by SADALP: iters × 128 multiply-adds (products a × b).
int64_t int8_dot_neon(int64_t iters, int8_t a, int8_t b);
// NEON SDOT (dot-product extension only): iters × 12 × 16 multiply-adds.
int64_t int8_dot_neondot(int64_t iters, int8_t a, int8_t b);
// `iters` rounds of 12 independent vdpbf16ps (32 bf16 products each) with all inputs equal to `x`.
// Returns the sum of lane 0 of the accumulators: 12 × iters × 2 × x². Work: iters × 12 × 32 multiply-adds.
float bf16_dot_avx512(int64_t iters, float x);

// AMX needs the tile-data permission (asked for once per process) and a tile configuration per thread.
bool amx_available();       // AMX-TILE + AMX-INT8 supported and permitted
bool amx_bf16_available();  // plus AMX-BF16
// `iters` rounds of 4 tdpbssd on 16×64 int8 tiles (16×16×64 multiply-adds each) with A bytes `a` and B bytes `b`.
// Returns C[0][0] of the first accumulator: iters × 64 × a × b (mod 2^32).
int64_t amx_int8_dot(int64_t iters, int8_t a, int8_t b);
// `iters` rounds of 4 tdpbf16ps (16×16×32 multiply-adds each) with all inputs 1.0: returns C[0][0] = iters × 32.
float amx_bf16_dot(int64_t iters);

}  // namespace kairo::bench::roofline_kernels
