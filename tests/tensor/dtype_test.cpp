// The dtype table: ids, block sizes and bytes as ggml defines them, name lookup, and agreement with blocks.h.
#include "tensor/dtype.h"

#include <gtest/gtest.h>

#include "tensor/blocks.h"

namespace kairo {
namespace {

struct Expected {
  DType type;
  uint32_t id;
  const char* name;
  int64_t block_size;
  int64_t block_bytes;
  bool supported;
};

// Sizes from ggml's type traits (ggml.c) and block_* structs (ggml-common.h).
constexpr Expected kExpected[] = {
    {DType::F32, 0, "F32", 1, 4, true},          {DType::F16, 1, "F16", 1, 2, true},
    {DType::Q4_0, 2, "Q4_0", 32, 18, true},      {DType::Q4_1, 3, "Q4_1", 32, 20, true},
    {DType::Q5_0, 6, "Q5_0", 32, 22, true},      {DType::Q5_1, 7, "Q5_1", 32, 24, true},
    {DType::Q8_0, 8, "Q8_0", 32, 34, true},      {DType::Q8_1, 9, "Q8_1", 32, 36, false},
    {DType::Q2_K, 10, "Q2_K", 256, 84, false},   {DType::Q3_K, 11, "Q3_K", 256, 110, false},
    {DType::Q4_K, 12, "Q4_K", 256, 144, true},   {DType::Q5_K, 13, "Q5_K", 256, 176, true},
    {DType::Q6_K, 14, "Q6_K", 256, 210, true},   {DType::Q8_K, 15, "Q8_K", 256, 292, false},
    {DType::IQ2_XXS, 16, "IQ2_XXS", 256, 66, false}, {DType::IQ2_XS, 17, "IQ2_XS", 256, 74, false},
    {DType::IQ3_XXS, 18, "IQ3_XXS", 256, 98, false}, {DType::IQ1_S, 19, "IQ1_S", 256, 50, false},
    {DType::IQ4_NL, 20, "IQ4_NL", 32, 18, false},  {DType::IQ3_S, 21, "IQ3_S", 256, 110, false},
    {DType::IQ2_S, 22, "IQ2_S", 256, 82, false},   {DType::IQ4_XS, 23, "IQ4_XS", 256, 136, false},
    {DType::I8, 24, "I8", 1, 1, false},          {DType::I16, 25, "I16", 1, 2, false},
    {DType::I32, 26, "I32", 1, 4, false},        {DType::I64, 27, "I64", 1, 8, false},
    {DType::F64, 28, "F64", 1, 8, false},        {DType::IQ1_M, 29, "IQ1_M", 256, 56, false},
    {DType::BF16, 30, "BF16", 1, 2, true},       {DType::TQ1_0, 34, "TQ1_0", 256, 54, false},
    {DType::TQ2_0, 35, "TQ2_0", 256, 66, false}, {DType::MXFP4, 39, "MXFP4", 32, 17, true},
};

TEST(DType, TableMatchesGgml) {
  for (const Expected& e : kExpected) {
    SCOPED_TRACE(e.name);
    EXPECT_EQ(static_cast<uint32_t>(e.type), e.id);
    const DTypeInfo& info = dtype_info(e.type);
    EXPECT_EQ(info.name, e.name);
    EXPECT_EQ(info.block_size, e.block_size);
    EXPECT_EQ(info.block_bytes, e.block_bytes);
    EXPECT_EQ(info.supported, e.supported);
    const std::optional<DTypeInfo> raw = dtype_info(e.id);
    ASSERT_TRUE(raw.has_value());
    EXPECT_EQ(raw->name, e.name);
  }
}

TEST(DType, RetiredAndOutOfRangeIdsAreUnknown) {
  for (uint32_t id : {4u, 5u, 31u, 32u, 33u, 36u, 37u, 38u, 40u, 41u, 1000u, 0xffffffffu}) {
    EXPECT_FALSE(dtype_info(id).has_value()) << id;
  }
}

TEST(DType, FromNameIsCaseInsensitiveAndExact) {
  EXPECT_EQ(dtype_from_name("q4_k"), DType::Q4_K);
  EXPECT_EQ(dtype_from_name("Q4_K"), DType::Q4_K);
  EXPECT_EQ(dtype_from_name("f16"), DType::F16);
  EXPECT_EQ(dtype_from_name("bf16"), DType::BF16);
  EXPECT_EQ(dtype_from_name("Q8_0"), DType::Q8_0);
  EXPECT_EQ(dtype_from_name("iq4_xs"), DType::IQ4_XS);
  EXPECT_FALSE(dtype_from_name("").has_value());
  EXPECT_FALSE(dtype_from_name("Q4").has_value());
  EXPECT_FALSE(dtype_from_name("Q4_K_M").has_value());  // a mix, not a tensor type
  EXPECT_FALSE(dtype_from_name("F16 ").has_value());
  EXPECT_FALSE(dtype_from_name("float16").has_value());
}

TEST(DType, NamesRoundTrip) {
  for (const Expected& e : kExpected) EXPECT_EQ(dtype_from_name(dtype_name(e.type)), e.type) << e.name;
}

TEST(DType, RowBytes) {
  EXPECT_EQ(row_bytes(DType::F32, 7), 28u);
  EXPECT_EQ(row_bytes(DType::BF16, 3), 6u);
  EXPECT_EQ(row_bytes(DType::Q4_0, 4096), 128u * 18u);
  EXPECT_EQ(row_bytes(DType::Q8_0, 64), 68u);
  EXPECT_EQ(row_bytes(DType::Q4_K, 4096), 16u * 144u);
  EXPECT_EQ(row_bytes(DType::Q6_K, 256), 210u);
}

template <typename Block>
void expect_block_matches_table() {
  const DTypeInfo& info = dtype_info(BlockTraits<Block>::type);
  EXPECT_EQ(static_cast<int64_t>(sizeof(Block)), info.block_bytes) << info.name;
  EXPECT_EQ(BlockTraits<Block>::n, info.block_size) << info.name;
}

TEST(DType, BlockStructsMatchTable) {
  expect_block_matches_table<BlockQ4_0>();
  expect_block_matches_table<BlockQ4_1>();
  expect_block_matches_table<BlockQ5_0>();
  expect_block_matches_table<BlockQ5_1>();
  expect_block_matches_table<BlockQ8_0>();
  expect_block_matches_table<BlockQ4_K>();
  expect_block_matches_table<BlockQ5_K>();
  expect_block_matches_table<BlockQ6_K>();
}

}  // namespace
}  // namespace kairo
