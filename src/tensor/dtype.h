#pragma once
// Tensor element types, numbered as in GGUF/ggml so files map directly. Every type a GGUF file may name is listed
// (so `inspect` can describe any file); `dtype_info(t).supported` says which ones kairo can compute with.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace kairo {

enum class DType : uint32_t {
  F32 = 0, F16 = 1, Q4_0 = 2, Q4_1 = 3, Q5_0 = 6, Q5_1 = 7, Q8_0 = 8, Q8_1 = 9,
  Q2_K = 10, Q3_K = 11, Q4_K = 12, Q5_K = 13, Q6_K = 14, Q8_K = 15,
  IQ2_XXS = 16, IQ2_XS = 17, IQ3_XXS = 18, IQ1_S = 19, IQ4_NL = 20, IQ3_S = 21, IQ2_S = 22, IQ4_XS = 23,
  I8 = 24, I16 = 25, I32 = 26, I64 = 27, F64 = 28, IQ1_M = 29, BF16 = 30,
  TQ1_0 = 34, TQ2_0 = 35, MXFP4 = 39,
};

inline constexpr uint32_t kDTypeCount = 40;  // ids are < this; some ids in range are retired (see dtype_info)

struct DTypeInfo {
  std::string_view name;
  int64_t block_size;   // elements per block (1 for plain types)
  int64_t block_bytes;  // bytes per block
  bool supported;       // kairo has a dequantizer (and kernels) for it
};

// Info for a raw type id from a file, or nullopt when the id is unknown or retired.
std::optional<DTypeInfo> dtype_info(uint32_t raw_type);
const DTypeInfo& dtype_info(DType type);

inline std::string_view dtype_name(DType t) { return dtype_info(t).name; }
std::optional<DType> dtype_from_name(std::string_view name);  // case-insensitive: "q4_k", "F16"

// Bytes of a row of n elements; n must be a multiple of the block size (callers validate that first).
inline size_t row_bytes(DType t, int64_t n) {
  const DTypeInfo& info = dtype_info(t);
  return static_cast<size_t>(n / info.block_size * info.block_bytes);
}

}  // namespace kairo
