// Tensor type choice: llama.cpp's rules, checked against files llama-quantize wrote and against hand-derived cases.
#include "convert/quant_scheme.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

#include "gguf/gguf_file.h"
#include "test_paths.h"

namespace kairo::convert {
namespace {

std::vector<TensorDesc> descs_of(const gguf::File& f) {
  std::vector<TensorDesc> out;
  for (const auto& t : f.tensors()) out.push_back({t.name, t.dims, t.type});
  return out;
}

TEST(QuantScheme, ParsesNamesCaseInsensitivelyWithLlamaQuantizeAliases) {
  auto s = parse_quant_scheme("q4_k_m");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->name, "Q4_K_M");
  EXPECT_EQ(s->file_type, FileType::Q4_K_M);
  EXPECT_EQ(s->base, DType::Q4_K);
  EXPECT_EQ(parse_quant_scheme("Q4_K")->name, "Q4_K_M");
  EXPECT_EQ(parse_quant_scheme("q5_k")->name, "Q5_K_M");
  EXPECT_EQ(parse_quant_scheme("f16")->file_type, FileType::F16);
  EXPECT_EQ(static_cast<uint32_t>(parse_quant_scheme("Q8_0")->file_type), 7u);
  EXPECT_EQ(static_cast<uint32_t>(parse_quant_scheme("BF16")->file_type), 32u);
  EXPECT_EQ(static_cast<uint32_t>(parse_quant_scheme("mxfp4_moe")->file_type), 38u);
  EXPECT_EQ(parse_quant_scheme("MXFP4_MOE")->base, DType::MXFP4);
  const auto bad = parse_quant_scheme("Q3_K_XL");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("unknown type \"Q3_K_XL\""), std::string::npos) << bad.error().message;
  EXPECT_NE(bad.error().message.find("Q4_K_M"), std::string::npos);
}

TEST(QuantScheme, OrderIsGlobalsThenBlocksNumericallyThenNames) {
  const std::vector<TensorDesc> t = {{"token_embd.weight", {8, 8}}, {"blk.10.attn_q.weight", {8, 8}},
                                     {"blk.2.ffn_up.weight", {8, 8}}, {"blk.2.attn_q.weight", {8, 8}},
                                     {"output.weight", {8, 8}},       {"output_norm.weight", {8}}};
  const std::vector<size_t> order = quantize_order(t);
  std::vector<std::string> names;
  for (size_t i : order) names.push_back(t[i].name);
  EXPECT_EQ(names, (std::vector<std::string>{"output.weight", "output_norm.weight", "token_embd.weight",
                                             "blk.2.attn_q.weight", "blk.2.ffn_up.weight", "blk.10.attn_q.weight"}));
}

// Every quantized file in ../shared was written by llama-quantize from the f16 file beside it.
struct SharedCase {
  const char* model;
  const char* scheme;
};

class SharedQuantizedFiles : public ::testing::TestWithParam<SharedCase> {};

TEST_P(SharedQuantizedFiles, SameTypesAsLlamaQuantize) {
  const SharedCase c = GetParam();
  auto src = gguf::File::open(kairo::testing::shared_path(std::string("models/") + c.model + ".f16.gguf"));
  auto ref = gguf::File::open(kairo::testing::shared_path(std::string("models/") + c.model + "." + c.scheme + ".gguf"));
  ASSERT_TRUE(src.ok() && ref.ok());
  const std::string arch = *src->get_string("general.architecture");
  const ModelFacts facts{arch, static_cast<int>(*src->get_uint(arch + ".block_count")),
                         static_cast<int>(*src->get_uint(arch + ".attention.head_count")),
                         static_cast<int>(*src->get_uint(arch + ".attention.head_count_kv"))};
  const std::vector<TensorDesc> descs = descs_of(*src);
  const std::vector<DType> types = choose_tensor_types(descs, *parse_quant_scheme(c.scheme), facts);
  ASSERT_EQ(types.size(), ref->tensors().size());
  for (size_t i = 0; i < descs.size(); ++i) {
    const gguf::TensorInfo* want = ref->find_tensor(descs[i].name);
    ASSERT_NE(want, nullptr) << descs[i].name;
    EXPECT_EQ(dtype_name(types[i]), dtype_name(want->type)) << descs[i].name;
  }
}

INSTANTIATE_TEST_SUITE_P(All, SharedQuantizedFiles,
                         ::testing::Values(SharedCase{"synth-llama-gqa", "Q4_K_M"}, SharedCase{"synth-llama-gqa", "Q4_0"},
                                           SharedCase{"synth-llama-gqa", "Q8_0"}, SharedCase{"synth-llama-gqa", "Q6_K"},
                                           SharedCase{"synth-qwen2", "Q4_K_M"}, SharedCase{"synth-qwen2", "Q4_0"},
                                           SharedCase{"synth-qwen2", "Q8_0"}, SharedCase{"synth-qwen2", "Q6_K"},
                                           SharedCase{"synth-gpt-oss", "MXFP4_MOE"}),
                         [](const auto& info) {
                           const std::string model = info.param.model;
                           const char* prefix = model == "synth-qwen2" ? "qwen2_" : model == "synth-gpt-oss" ? "gpt_oss_" : "llama_";
                           return std::string(prefix) + info.param.scheme;
                         });

// A 24-layer qwen2.5-0.5b-like table: 896-wide rows do not split into 256-blocks.
std::vector<TensorDesc> qwen_05b_like() {
  std::vector<TensorDesc> t = {{"token_embd.weight", {896, 151936}}, {"output_norm.weight", {896}}};
  for (int l = 0; l < 24; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    t.push_back({p + "attn_norm.weight", {896}});
    t.push_back({p + "attn_q.weight", {896, 896}});
    t.push_back({p + "attn_q.bias", {896}});
    t.push_back({p + "attn_k.weight", {896, 128}});
    t.push_back({p + "attn_v.weight", {896, 128}});
    t.push_back({p + "attn_output.weight", {896, 896}});
    t.push_back({p + "ffn_gate.weight", {896, 4864}});
    t.push_back({p + "ffn_up.weight", {896, 4864}});
    t.push_back({p + "ffn_down.weight", {4864, 896}});
  }
  return t;
}

TEST(QuantScheme, Q4KMOnOddWidthsFallsBackAndBumpsTheUseMoreBitsLayers) {
  const auto t = qwen_05b_like();
  const auto types = choose_tensor_types(t, *parse_quant_scheme("Q4_K_M"), {"qwen2", 24, 14, 2});
  std::map<std::string, DType> by_name;
  for (size_t i = 0; i < t.size(); ++i) by_name[t[i].name] = types[i];
  // Tied embedding: quantized as the output; 896 % 256 != 0 -> Q8_0.
  EXPECT_EQ(by_name["token_embd.weight"], DType::Q8_0);
  EXPECT_EQ(by_name["output_norm.weight"], DType::F32);
  EXPECT_EQ(by_name["blk.0.attn_q.bias"], DType::F32);
  // i < 3, i >= 21, or (i - 3) % 3 == 2: the layers that get Q6_K (rows of 4864 split fine).
  const std::set<int> more_bits = {0, 1, 2, 5, 8, 11, 14, 17, 20, 21, 22, 23};
  for (int l = 0; l < 24; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    EXPECT_EQ(by_name[p + "ffn_down.weight"], more_bits.count(l) ? DType::Q6_K : DType::Q4_K) << l;
    // attn_v: Q6_K wanted on the same layers but 896-wide rows fall back Q6_K -> Q8_0, Q4_K -> Q5_0.
    EXPECT_EQ(by_name[p + "attn_v.weight"], more_bits.count(l) ? DType::Q8_0 : DType::Q5_0) << l;
    EXPECT_EQ(by_name[p + "attn_q.weight"], DType::Q5_0) << l;
    EXPECT_EQ(by_name[p + "ffn_gate.weight"], DType::Q5_0) << l;
  }
}

TEST(QuantScheme, PureKeepsTheBaseTypeEverywhereItFits) {
  const auto t = qwen_05b_like();
  const auto types = choose_tensor_types(t, *parse_quant_scheme("Q4_K_M"), {"qwen2", 24, 14, 2}, /*pure=*/true);
  for (size_t i = 0; i < t.size(); ++i) {
    if (t[i].dims.size() == 1) {
      EXPECT_EQ(types[i], DType::F32) << t[i].name;
    } else {
      EXPECT_EQ(types[i], t[i].dims[0] % 256 == 0 ? DType::Q4_K : DType::Q5_0) << t[i].name;
    }
  }
}

TEST(QuantScheme, LegacyTypesOnlyRaiseTheOutputAndFloatTypesOnlyTouchMatrices) {
  const std::vector<TensorDesc> t = {{"token_embd.weight", {64, 100}}, {"output.weight", {64, 100}},
                                     {"blk.0.attn_v.weight", {64, 64}}, {"blk.0.ffn_down.weight", {96, 64}},
                                     {"blk.0.ffn_norm.weight", {64}},    {"blk.0.odd.weight", {40, 64}}};
  const ModelFacts facts{"llama", 1, 4, 4};
  auto q40 = choose_tensor_types(t, *parse_quant_scheme("Q4_0"), facts);
  EXPECT_EQ(q40, (std::vector<DType>{DType::Q4_0, DType::Q8_0 /* 64 % 256 */, DType::Q4_0, DType::Q4_0, DType::F32,
                                     DType::F16 /* 40 % 32 */}));
  auto q80 = choose_tensor_types(t, *parse_quant_scheme("Q8_0"), facts);
  EXPECT_EQ(q80[1], DType::Q8_0);
  auto f16 = choose_tensor_types(t, *parse_quant_scheme("F16"), facts);
  EXPECT_EQ(f16, (std::vector<DType>{DType::F16, DType::F16, DType::F16, DType::F16, DType::F32, DType::F16}));
}

TEST(QuantScheme, OutputRuleUsesQ6KWhenRowsSplitInto256Blocks) {
  const std::vector<TensorDesc> t = {{"token_embd.weight", {256, 10}}, {"output.weight", {256, 10}}};
  auto types = choose_tensor_types(t, *parse_quant_scheme("Q4_0"), {"llama", 1, 1, 1});
  EXPECT_EQ(types, (std::vector<DType>{DType::Q4_0, DType::Q6_K}));
  // Without output.weight the embedding is the output projection and gets its type.
  types = choose_tensor_types({t[0]}, *parse_quant_scheme("Q4_0"), {"llama", 1, 1, 1});
  EXPECT_EQ(types, (std::vector<DType>{DType::Q6_K}));
}

}  // namespace
}  // namespace kairo::convert
