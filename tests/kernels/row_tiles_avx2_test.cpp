// The AVX2 row-tile kernels (plain vpmaddubsw, and AVX-VNNI where the CPU has it) do the AVX-512 kernels' integer
// dots and float steps, so on a CPU with both ISAs every output must be bit-identical between them, for every packed type, token count (the GEMV, each multi-token pass
// size, and chunks) and row count (partial tiles, each GEMV tile group). The activation quantizers must agree bit for
// bit as well, including all-zero blocks and extreme magnitudes. (Each ISA is also checked against the scalar
// reference in matmul_test and for batch invariance in batch_invariance_test.)
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "core/thread_pool.h"
#include "kernel_test_util.h"
#include "kernels/cpu/act_quant.h"
#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/row_tile_matmul.h"

namespace kairo::kernels {
namespace {

const Backend* backend_or_null(cpu::Isa isa) { return cpu::cpu_backend(isa); }

TEST(RowTilesAvx2, ActivationQuantizationMatchesAvx512BitForBit) {
  if (backend_or_null(cpu::Isa::Avx512) == nullptr) GTEST_SKIP() << "CPU lacks avx512; nothing to compare against";
  std::mt19937 rng(7);
  for (int64_t cols : {32, 96, 544, 2080}) {
    for (float scale : {0.0f, 1e-30f, 0.01f, 1.0f, 3e4f, 1e30f}) {
      std::vector<float> x = testing::random_floats(rng, static_cast<size_t>(cols), scale);
      if (cols >= 64) std::memset(x.data() + 32, 0, 32 * sizeof(float));  // a zero block
      x[1] = -x[1] * 5.0f;                                                   // a lone extreme
      std::vector<uint8_t> m2(cpu::act_q8_bytes(cols)), m5(cpu::act_q8_bytes(cols));
      cpu::ActQ8 a2 = cpu::act_q8_layout(m2.data(), cols), a5 = cpu::act_q8_layout(m5.data(), cols);
      avx2::quantize_act_q8(x.data(), a2);
      avx512::quantize_act_q8(x.data(), a5);
      SCOPED_TRACE("cols=" + std::to_string(cols) + " scale=" + std::to_string(scale));
      EXPECT_EQ(std::memcmp(m2.data(), m5.data(), m2.size()), 0);
    }
  }
}

TEST(RowTilesAvx2, EveryOutputMatchesAvx512BitForBit) {
  const Backend* avx2 = backend_or_null(cpu::Isa::Avx2);
  const Backend* avx512 = backend_or_null(cpu::Isa::Avx512);
  if (avx2 == nullptr || avx512 == nullptr) GTEST_SKIP() << "CPU lacks avx2 or avx512; nothing to compare";
  ThreadPool pool(2);
  std::mt19937 rng(11);
  int compared = 0;
  for (DType type : {DType::Q4_0, DType::Q8_0, DType::MXFP4, DType::Q4_K, DType::Q6_K}) {
    const int64_t block = dtype_info(type).block_size;
    const std::vector<std::pair<int64_t, int64_t>> shapes =
        block == 256 ? std::vector<std::pair<int64_t, int64_t>>{{37, 768}, {224, 512}}
                     : std::vector<std::pair<int64_t, int64_t>>{{37, 544}, {181, 2080}};
    for (const auto& [rows, cols] : shapes) {
      const size_t rb = row_bytes(type, cols);
      std::vector<uint8_t> data(rb * static_cast<size_t>(rows));
      for (int64_t r = 0; r < rows; ++r) testing::random_row(rng, type, cols, data.data() + r * rb);
      const MatrixView w{type, data.data(), rows, cols, rb};
      const PackedMatrix packed = avx512->pack_weights(w);
      ASSERT_NE(packed.view.packing, 0u) << dtype_name(type);
      for (int64_t n : {1, 2, 3, 4, 5, 7, 9, 33, 70}) {
        std::vector<float> x = testing::random_floats(rng, static_cast<size_t>(n * cols));
        std::vector<float> y5(static_cast<size_t>(n * rows));
        avx512->matmul(packed.view, x.data(), y5.data(), n, pool);
        for (float v : y5) ASSERT_TRUE(std::isfinite(v));
        // The backend's choice, then each AVX2 kernel family directly.
        std::vector<std::pair<const char*, const cpu::RowTileKernels*>> variants = {
            {"backend", nullptr}, {"plain", &avx2::plain_row_tile_kernels()}};
        if (cpu::cpu_features().avx_vnni) variants.emplace_back("avx-vnni", &avxvnni::row_tile_kernels());
        for (const auto& [name, kernels] : variants) {
          std::vector<float> y2(y5.size(), -1.0f);
          float* out = y2.data();
          if (kernels == nullptr) avx2->matmul(packed.view, x.data(), out, n, pool);
          else cpu::row_tiles_matmul(*kernels, cpu::RowTileSet{&packed.view, &out, 1}, x.data(), n, 32, pool);
          SCOPED_TRACE(std::string(name) + " " + std::string(dtype_name(type)) + " rows=" + std::to_string(rows) +
                       " cols=" + std::to_string(cols) + " tokens=" + std::to_string(n));
          ASSERT_EQ(std::memcmp(y2.data(), y5.data(), y2.size() * sizeof(float)), 0);
        }
        ++compared;
      }
    }
  }
  EXPECT_EQ(compared, 5 * 2 * 9);
}

}  // namespace
}  // namespace kairo::kernels
