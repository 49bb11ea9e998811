#include "tensor/dtype.h"

#include <array>
#include <cctype>

namespace kairo {
namespace {

constexpr int64_t QK = 32;    // block size of the legacy quants
constexpr int64_t QK_K = 256; // block size of the K- and I-quants

struct Entry {
  bool present;
  DTypeInfo info;
};

constexpr std::array<Entry, kDTypeCount> make_table() {
  std::array<Entry, kDTypeCount> t{};
  auto set = [&](DType d, std::string_view name, int64_t bs, int64_t bb, bool sup) {
    t[static_cast<uint32_t>(d)] = Entry{true, DTypeInfo{name, bs, bb, sup}};
  };
  set(DType::F32, "F32", 1, 4, true);
  set(DType::F16, "F16", 1, 2, true);
  set(DType::Q4_0, "Q4_0", QK, 2 + QK / 2, true);
  set(DType::Q4_1, "Q4_1", QK, 4 + QK / 2, true);
  set(DType::Q5_0, "Q5_0", QK, 2 + 4 + QK / 2, true);
  set(DType::Q5_1, "Q5_1", QK, 4 + 4 + QK / 2, true);
  set(DType::Q8_0, "Q8_0", QK, 2 + QK, true);
  set(DType::Q8_1, "Q8_1", QK, 4 + QK, false);
  set(DType::Q2_K, "Q2_K", QK_K, QK_K / 16 + QK_K / 4 + 4, false);
  set(DType::Q3_K, "Q3_K", QK_K, QK_K / 8 + QK_K / 4 + 12 + 2, false);
  set(DType::Q4_K, "Q4_K", QK_K, 4 + 12 + QK_K / 2, true);
  set(DType::Q5_K, "Q5_K", QK_K, 4 + 12 + QK_K / 8 + QK_K / 2, true);
  set(DType::Q6_K, "Q6_K", QK_K, QK_K / 2 + QK_K / 4 + QK_K / 16 + 2, true);
  set(DType::Q8_K, "Q8_K", QK_K, 4 + QK_K + QK_K / 16 * 2, false);
  set(DType::IQ2_XXS, "IQ2_XXS", QK_K, 2 + QK_K / 4, false);
  set(DType::IQ2_XS, "IQ2_XS", QK_K, 2 + QK_K / 4 + QK_K / 32, false);
  set(DType::IQ3_XXS, "IQ3_XXS", QK_K, 2 + 3 * QK_K / 8, false);
  set(DType::IQ1_S, "IQ1_S", QK_K, 2 + QK_K / 8 + QK_K / 16, false);
  set(DType::IQ4_NL, "IQ4_NL", QK, 2 + QK / 2, false);
  set(DType::IQ3_S, "IQ3_S", QK_K, 2 + QK_K / 4 + QK_K / 32 + QK_K / 8 + QK_K / 64, false);
  set(DType::IQ2_S, "IQ2_S", QK_K, 2 + QK_K / 4 + QK_K / 32 + QK_K / 32, false);
  set(DType::IQ4_XS, "IQ4_XS", QK_K, 2 + 2 + QK_K / 64 + QK_K / 2, false);
  set(DType::I8, "I8", 1, 1, false);
  set(DType::I16, "I16", 1, 2, false);
  set(DType::I32, "I32", 1, 4, false);
  set(DType::I64, "I64", 1, 8, false);
  set(DType::F64, "F64", 1, 8, false);
  set(DType::IQ1_M, "IQ1_M", QK_K, QK_K / 8 + QK_K / 16 + QK_K / 32, false);
  set(DType::BF16, "BF16", 1, 2, true);
  set(DType::TQ1_0, "TQ1_0", QK_K, 2 + 4 * 13, false);
  set(DType::TQ2_0, "TQ2_0", QK_K, 2 + 64, false);
  set(DType::MXFP4, "MXFP4", QK, 1 + QK / 2, true);
  return t;
}

constexpr std::array<Entry, kDTypeCount> kTable = make_table();

}  // namespace

std::optional<DTypeInfo> dtype_info(uint32_t raw_type) {
  if (raw_type >= kDTypeCount || !kTable[raw_type].present) return std::nullopt;
  return kTable[raw_type].info;
}

const DTypeInfo& dtype_info(DType type) { return kTable[static_cast<uint32_t>(type)].info; }

std::optional<DType> dtype_from_name(std::string_view name) {
  for (uint32_t i = 0; i < kDTypeCount; ++i) {
    if (!kTable[i].present) continue;
    const std::string_view n = kTable[i].info.name;
    if (n.size() != name.size()) continue;
    bool same = true;
    for (size_t k = 0; k < n.size() && same; ++k) {
      same = std::toupper(static_cast<unsigned char>(name[k])) == n[k];
    }
    if (same) return static_cast<DType>(i);
  }
  return std::nullopt;
}

}  // namespace kairo
