#pragma once
// Shared helpers for the kernel tests: random inputs, comparison metrics and the list of ISA paths to check.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "core/half.h"
#include "kernels/backend.h"
#include "kernels/cpu/cpu_backend.h"
#include "tensor/dtype.h"

namespace kairo::kernels::testing {

// The optimized paths (the reference is the oracle, not a subject).
// The optimized levels of this build's architecture (a CPU lacking one skips its tests).
inline std::vector<cpu::Isa> optimized_isas() {
#if defined(__aarch64__)
  return {cpu::Isa::Neon};
#else
  return {cpu::Isa::Avx2, cpu::Isa::Avx512, cpu::Isa::Amx};
#endif
}

inline std::string isa_param_name(const ::testing::TestParamInfo<cpu::Isa>& info) {
  return cpu::isa_name(info.param);
}

// The backend under test, or a skip when this CPU lacks the ISA (the path can't run here at all).
#define KAIRO_BACKEND_OR_SKIP(var, isa)                                                   \
  const Backend* var = cpu::cpu_backend(isa);                                             \
  if (var == nullptr) GTEST_SKIP() << "CPU lacks " << cpu::isa_name(isa) << "; path not run"

inline std::vector<float> random_floats(std::mt19937& rng, size_t n, float scale = 1.0f) {
  std::normal_distribution<float> dist(0.0f, scale);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

// Where a quant type keeps its f16 scale fields (byte offsets within a block) so random blocks get sane scales.
inline std::vector<int> scale_offsets(DType t) {
  switch (t) {
    case DType::Q4_0: case DType::Q5_0: case DType::Q8_0: return {0};
    case DType::Q4_1: case DType::Q5_1: case DType::Q4_K: case DType::Q5_K: return {0, 2};
    case DType::Q6_K: return {208};
    default: return {};
  }
}

// A random weight row of `type`: float types get normal values; quant types get random bytes (every code and
// bit pattern appears) with their f16 scales replaced by small random values.
inline void random_row(std::mt19937& rng, DType type, int64_t n_cols, uint8_t* dst) {
  const size_t bytes = row_bytes(type, n_cols);
  if (type == DType::F32 || type == DType::F16 || type == DType::BF16) {
    const std::vector<float> v = random_floats(rng, static_cast<size_t>(n_cols));
    for (int64_t i = 0; i < n_cols; ++i) {
      if (type == DType::F32) {
        std::memcpy(dst + 4 * i, &v[i], 4);
      } else {
        const uint16_t h = type == DType::F16 ? f32_to_f16(v[i]) : f32_to_bf16(v[i]);
        std::memcpy(dst + 2 * i, &h, 2);
      }
    }
    return;
  }
  std::uniform_int_distribution<int> byte(0, 255);
  for (size_t i = 0; i < bytes; ++i) dst[i] = static_cast<uint8_t>(byte(rng));
  std::uniform_real_distribution<float> sc(0.001f, 0.02f);
  const DTypeInfo& info = dtype_info(type);
  if (type == DType::MXFP4) {  // E8M0 scale bytes 2^-12 .. 2^-6 (x the codes' 0..12); byte 0 of each block
    std::uniform_int_distribution<int> e(116, 122);
    for (int64_t b = 0; b < n_cols / info.block_size; ++b) dst[b * info.block_bytes] = static_cast<uint8_t>(e(rng));
    return;
  }
  for (int64_t b = 0; b < n_cols / info.block_size; ++b) {
    for (int off : scale_offsets(type)) {
      const uint16_t h = f32_to_f16(sc(rng));
      std::memcpy(dst + b * info.block_bytes + off, &h, 2);
    }
  }
}

// A random weight matrix in GGUF layout, and the copy a backend repacks it into.
struct RandomWeight {
  std::vector<uint8_t> data;
  MatrixView view;      // GGUF layout (what the reference reads)
  PackedMatrix packed;  // the last backend's layout (for_backend)

  // The view to pass to be's matmul: its packed copy, or the GGUF view when it keeps that layout.
  MatrixView for_backend(const Backend& be) {
    packed = be.pack_weights != nullptr ? be.pack_weights(view) : PackedMatrix{};
    return packed.view.data != nullptr ? packed.view : view;
  }
};

inline RandomWeight random_weight(std::mt19937& rng, DType type, int64_t rows, int64_t cols) {
  RandomWeight w;
  const size_t rb = row_bytes(type, cols);
  w.data.resize(rb * static_cast<size_t>(rows));
  for (int64_t r = 0; r < rows; ++r) random_row(rng, type, cols, w.data.data() + r * rb);
  w.view = MatrixView{type, w.data.data(), rows, cols, rb};
  return w;
}

struct Diff {
  double max_abs = 0;
  double rms_err = 0;
  double rms_ref = 0;
  double cosine = 1;
};

inline Diff compare(const std::vector<float>& got, const std::vector<float>& ref) {
  Diff d;
  double dot = 0, gg = 0, rr = 0, ee = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    const double e = static_cast<double>(got[i]) - ref[i];
    d.max_abs = std::max(d.max_abs, std::fabs(e));
    ee += e * e;
    dot += static_cast<double>(got[i]) * ref[i];
    gg += static_cast<double>(got[i]) * got[i];
    rr += static_cast<double>(ref[i]) * ref[i];
  }
  const double n = static_cast<double>(std::max<size_t>(1, ref.size()));
  d.rms_err = std::sqrt(ee / n);
  d.rms_ref = std::sqrt(rr / n);
  d.cosine = (gg > 0 && rr > 0) ? dot / std::sqrt(gg * rr) : (gg == rr ? 1.0 : 0.0);
  return d;
}

inline std::string describe(const Diff& d) {
  return "max_abs=" + std::to_string(d.max_abs) + " rms_err=" + std::to_string(d.rms_err) +
         " rms_ref=" + std::to_string(d.rms_ref) + " cosine=" + std::to_string(d.cosine);
}

}  // namespace kairo::kernels::testing
