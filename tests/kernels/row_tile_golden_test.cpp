// Every ISA's row-tile path (AVX2 plain and AVX-VNNI, AVX-512, AMX, NEON plain, SDOT and SMMLA) does the same integer dots
// and float steps (quant_matmul.h's batch-invariance contract), so its outputs must be the same bits on every CPU
// and architecture. This test pins them: the outputs of fixed inputs, hashed, against hashes recorded from the
// AVX-512 path on x86-64. The inputs come from an integer generator (no <random> distributions, whose float
// arithmetic the compiler may contract differently per architecture), so an aarch64 build under qemu-user checks
// its NEON kernels against the x86 bits.
// To record the hashes again after a deliberate change of the arithmetic: KAIRO_PRINT_ROW_TILE_HASHES=1.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "core/half.h"
#include "core/thread_pool.h"
#include "kernels/backend.h"
#include "kernels/cpu/cpu_backend.h"
#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/row_tile_matmul.h"
#include "tensor/dtype.h"

namespace kairo::kernels {
namespace {

// splitmix64: the same sequence on every platform.
struct Bits {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  int range(int lo, int hi) { return lo + static_cast<int>(next() % static_cast<uint64_t>(hi - lo + 1)); }
};

// An f16 scale in [2^-10, 2^-6): exponent and mantissa bits drawn directly.
uint16_t random_scale_f16(Bits& g) { return static_cast<uint16_t>((g.range(5, 8) << 10) | g.range(0, 1023)); }

// Random GGUF rows: every byte random, then each block's scale fields made sane (as kernel_test_util's random_row,
// without float arithmetic).
std::vector<uint8_t> random_rows(Bits& g, DType type, int64_t rows, int64_t cols) {
  const DTypeInfo& info = dtype_info(type);
  const size_t rb = row_bytes(type, cols);
  std::vector<uint8_t> data(rb * static_cast<size_t>(rows));
  for (auto& b : data) b = static_cast<uint8_t>(g.next());
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t b = 0; b < cols / info.block_size; ++b) {
      uint8_t* blk = data.data() + static_cast<size_t>(r) * rb + b * info.block_bytes;
      auto put = [&](int off) {
        const uint16_t h = random_scale_f16(g);
        std::memcpy(blk + off, &h, 2);
      };
      switch (type) {
        case DType::Q4_0: case DType::Q8_0: put(0); break;
        case DType::Q4_K: put(0); put(2); break;
        case DType::Q6_K: put(208); break;
        case DType::MXFP4: blk[0] = static_cast<uint8_t>(g.range(116, 122)); break;
        default: break;
      }
    }
  }
  return data;
}

// Activations: multiples of 2^-12 in (-4, 4), with an all-zero block and a lone extreme so the quantizer's edge
// cases are part of what is pinned.
std::vector<float> random_activations(Bits& g, int64_t n) {
  std::vector<float> x(static_cast<size_t>(n));
  for (auto& v : x) v = static_cast<float>(g.range(-16383, 16383)) * (1.0f / 4096.0f);
  if (n >= 64) std::memset(x.data() + 32, 0, 32 * sizeof(float));
  x[1] = 60.0f;
  return x;
}

uint64_t fnv1a(const std::vector<float>& y) {
  uint64_t h = 0xcbf29ce484222325ull;
  const auto* p = reinterpret_cast<const uint8_t*>(y.data());
  for (size_t i = 0; i < y.size() * sizeof(float); ++i) h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

struct GoldenCase {
  DType type;
  int64_t rows, cols;
  uint64_t hash;  // of the outputs for 1, 2, 3, 4, 5, 9 and 33 tokens, one after another
};

// Recorded from the AVX-512 path (an EPYC Zen 5) with KAIRO_PRINT_ROW_TILE_HASHES=1.
const GoldenCase kCases[] = {
    {DType::Q4_0, 37, 544, 0xfcd431f7f18bcf52ull},  {DType::Q4_0, 64, 2080, 0xe623839e03ee1cb3ull},
    {DType::Q8_0, 37, 544, 0xe4c6f854e558bad9ull},  {DType::Q8_0, 64, 2080, 0xcc6897f437b7e39dull},
    {DType::MXFP4, 37, 544, 0x976cd52b88b6a9c2ull}, {DType::MXFP4, 64, 2080, 0x1c1fc9190f2396cfull},
    {DType::Q4_K, 37, 768, 0x8d7496c78d99b611ull},  {DType::Q4_K, 64, 1280, 0xc09a4bf1540283cfull},
    {DType::Q6_K, 37, 768, 0x708cbb6377da2de2ull},  {DType::Q6_K, 64, 1280, 0x98b5d6aeac359c8dull},
};
constexpr int kTokenCounts[] = {1, 2, 3, 4, 5, 9, 33};

// The outputs of one case through `matmul` (the backend's, or the row-tile driver with given kernels).
template <typename Matmul>
uint64_t case_hash(const GoldenCase& c, const Backend& be, Matmul&& matmul) {
  Bits g{static_cast<uint64_t>(c.rows * 1000003 + c.cols) ^ static_cast<uint64_t>(c.type)};
  std::vector<uint8_t> data = random_rows(g, c.type, c.rows, c.cols);
  const MatrixView w{c.type, data.data(), c.rows, c.cols, row_bytes(c.type, c.cols)};
  const PackedMatrix packed = be.pack_weights(w);
  EXPECT_NE(packed.view.packing, 0u) << dtype_name(c.type);
  std::vector<float> all;
  for (int n : kTokenCounts) {
    const std::vector<float> x = random_activations(g, n * c.cols);
    std::vector<float> y(static_cast<size_t>(n * c.rows), -1.0f);
    matmul(packed.view, x.data(), y.data(), n);
    all.insert(all.end(), y.begin(), y.end());
  }
  return fnv1a(all);
}

// Each supported row-tile path: the backend of each level, then each kernel family directly.
struct Path {
  std::string name;
  const Backend* backend;
  const cpu::RowTileKernels* kernels;  // nullptr: the backend's matmul
};
std::vector<Path> row_tile_paths() {
  std::vector<Path> paths;
  for (cpu::Isa isa : cpu::kAllIsas) {
    const Backend* be = cpu::cpu_backend(isa);
    if (isa != cpu::Isa::Scalar && be != nullptr) paths.push_back({cpu::isa_name(isa), be, nullptr});
  }
  const auto& f = cpu::cpu_features();
#if defined(__x86_64__)
  if (f.avx2) paths.push_back({"avx2-plain", cpu::cpu_backend(cpu::Isa::Avx2), &avx2::plain_row_tile_kernels()});
  if (f.avx_vnni) paths.push_back({"avx-vnni", cpu::cpu_backend(cpu::Isa::Avx2), &avxvnni::row_tile_kernels()});
#elif defined(__aarch64__)
  if (f.neon) paths.push_back({"neon-plain", cpu::cpu_backend(cpu::Isa::Neon), &neon::plain_row_tile_kernels()});
  if (f.neon_dot) paths.push_back({"neon-sdot", cpu::cpu_backend(cpu::Isa::Neon), &neondot::row_tile_kernels()});
  if (f.neon_i8mm) paths.push_back({"neon-i8mm", cpu::cpu_backend(cpu::Isa::Neon), &neoni8mm::row_tile_kernels()});
#endif
  return paths;
}

TEST(RowTileGolden, EveryPathGivesTheRecordedBits) {
  const std::vector<Path> paths = row_tile_paths();
  if (paths.empty()) GTEST_SKIP() << "no row-tile path on this CPU";
  const bool print = std::getenv("KAIRO_PRINT_ROW_TILE_HASHES") != nullptr;
  ThreadPool pool(2);
  for (const Path& p : paths) {
    for (const GoldenCase& c : kCases) {
      const uint64_t h = case_hash(c, *p.backend, [&](const MatrixView& w, const float* x, float* y, int n) {
        if (p.kernels == nullptr) return p.backend->matmul(w, x, y, n, pool);
        cpu::row_tiles_matmul(*p.kernels, cpu::RowTileSet{&w, &y, 1}, x, n, 32, pool);
      });
      if (print) std::printf("%s %s %lldx%lld 0x%016llxull\n", p.name.c_str(), std::string(dtype_name(c.type)).c_str(),
                             static_cast<long long>(c.rows), static_cast<long long>(c.cols),
                             static_cast<unsigned long long>(h));
      EXPECT_EQ(h, c.hash) << p.name << " " << dtype_name(c.type) << " " << c.rows << "x" << c.cols;
    }
  }
}

}  // namespace
}  // namespace kairo::kernels
