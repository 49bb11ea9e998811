// The planner's weight accounting against hand-computed numbers for the synthetic models of known shape
// (dim 256, 2 layers, 8 heads / 2 KV heads of 32, ffn 768, vocab 512; see ../shared/README.md).
#include <gtest/gtest.h>

#include <set>

#include "gguf/gguf_file.h"
#include "model/config.h"
#include "plan/memory_plan.h"
#include "plan/model_presets.h"
#include "plan/model_shapes.h"

namespace kairo::plan {
namespace {

std::string model_path(const char* name) { return std::string(KAIRO_SHARED_DIR) + "/models/" + name; }

// Element counts of the synthetic llama, written out from its shape.
constexpr int64_t kEmbd = 256 * 512;
constexpr int64_t kPerLayerMatrices = 256 * 256 /*q*/ + 256 * 64 /*k*/ + 256 * 64 /*v*/ + 256 * 256 /*o*/ +
                                      3 * 256 * 768 /*gate, up, down*/;
constexpr int64_t kVectors = 256 /*output_norm*/ + 2 * 2 * 256 /*attn_norm, ffn_norm per layer*/;

TEST(Weights, SynthLlamaQ8_0MatchesHandCount) {
  auto file = gguf::File::open(model_path("synth-llama-gqa.Q8_0.gguf"));
  ASSERT_TRUE(file.ok()) << file.error().message;
  const WeightsSummary w = summarize_weights(tensors_from_file(*file));

  const int64_t q8_elements = 2 * kEmbd + 2 * kPerLayerMatrices;  // token_embd + output + layers
  const uint64_t q8_bytes = q8_elements / 32 * 34;
  const uint64_t f32_bytes = kVectors * 4;
  ASSERT_EQ(w.by_type.size(), 2u);
  EXPECT_EQ(w.by_type[0].type, DType::Q8_0);
  EXPECT_EQ(w.by_type[0].n_tensors, 16);
  EXPECT_EQ(w.by_type[0].n_elements, q8_elements);
  EXPECT_EQ(w.by_type[0].n_bytes, q8_bytes);
  EXPECT_EQ(w.by_type[1].type, DType::F32);
  EXPECT_EQ(w.by_type[1].n_tensors, 5);
  EXPECT_EQ(w.by_type[1].n_bytes, f32_bytes);
  EXPECT_EQ(w.total_bytes, q8_bytes + f32_bytes);
  EXPECT_EQ(w.total_bytes, 1885184u);
  EXPECT_EQ(w.n_params, q8_elements + kVectors);
  // The output projection multiplies, the embedding table is only looked up.
  EXPECT_EQ(w.n_matmul_params, kEmbd + 2 * kPerLayerMatrices);
  // Decode reads everything once, except that of the embedding table only one row (256 values = 8 blocks).
  const uint64_t embd_bytes = kEmbd / 32 * 34;
  EXPECT_EQ(w.bytes_read_per_token, w.total_bytes - embd_bytes + 8 * 34);
  EXPECT_TRUE(w.quantized);
}

TEST(Weights, SynthLlamaQ4KMixCountsEachType) {
  auto file = gguf::File::open(model_path("synth-llama-gqa.Q4_K_M.gguf"));
  ASSERT_TRUE(file.ok()) << file.error().message;
  const WeightsSummary w = summarize_weights(tensors_from_file(*file));
  uint64_t q4k = 0, q6k = 0, f32 = 0;
  for (const auto& t : w.by_type) {
    if (t.type == DType::Q4_K) q4k = t.n_bytes;
    if (t.type == DType::Q6_K) q6k = t.n_bytes;
    if (t.type == DType::F32) f32 = t.n_bytes;
  }
  // Sum over the file's own tensor list, by type, with the block sizes written out (Q4_K 144 B, Q6_K 210 B per 256).
  uint64_t want_q4k = 0, want_q6k = 0;
  for (const auto& t : file->tensors()) {
    if (t.type == DType::Q4_K) want_q4k += t.n_elements() / 256 * 144;
    if (t.type == DType::Q6_K) want_q6k += t.n_elements() / 256 * 210;
  }
  EXPECT_GT(want_q6k, 0u);
  EXPECT_EQ(q4k, want_q4k);
  EXPECT_EQ(q6k, want_q6k);
  EXPECT_EQ(f32, kVectors * 4u);
  EXPECT_EQ(w.total_bytes, want_q4k + want_q6k + kVectors * 4u);
}

// The generated tensor list of a shape is the one llama.cpp's converter writes: same names, dims, and bytes.
void expect_standard_matches_file(const char* name) {
  auto file = gguf::File::open(model_path(name));
  ASSERT_TRUE(file.ok()) << file.error().message;
  auto config = model::read_config(*file);
  ASSERT_TRUE(config.ok()) << config.error().message;
  const auto from_file = tensors_from_file(*file);
  const auto generated = standard_tensors(*config, DType::Q8_0);
  std::set<std::pair<std::string, std::vector<int64_t>>> a, b;
  for (const auto& t : from_file) a.insert({t.name, t.dims});
  for (const auto& t : generated) b.insert({t.name, t.dims});
  EXPECT_EQ(a, b) << name;
  EXPECT_EQ(summarize_weights(generated).total_bytes, summarize_weights(from_file).total_bytes) << name;
}

TEST(Weights, StandardTensorsMatchLlamaFile) { expect_standard_matches_file("synth-llama-gqa.Q8_0.gguf"); }
TEST(Weights, StandardTensorsMatchQwen2FileWithBiases) { expect_standard_matches_file("synth-qwen2.Q8_0.gguf"); }
TEST(Weights, StandardTensorsMatchPhi3FileWithFusedProjections) {
  expect_standard_matches_file("synth-phi3.Q8_0.gguf");
}
TEST(Weights, StandardTensorsMatchGemmaFilesWithPostNorms) {
  expect_standard_matches_file("synth-gemma2.Q8_0.gguf");
  expect_standard_matches_file("synth-gemma3.Q8_0.gguf");
}
TEST(Weights, StandardTensorsMatchGptOssFileWithSinksAndBiases) {
  expect_standard_matches_file("synth-gpt-oss.Q8_0.gguf");
}
TEST(Weights, StandardTensorsMatchQwen3FileWithQkNorms) { expect_standard_matches_file("synth-qwen3.Q8_0.gguf"); }
TEST(Weights, StandardTensorsMatchQwen3moeFileWithRouterAndExperts) {
  expect_standard_matches_file("synth-qwen3moe.Q8_0.gguf");
}

// A token reads the router and its chosen experts only; a step of many tokens reads the experts any of them chose.
TEST(Weights, MixtureOfExpertsCountsTheChosenExpertsPerToken) {
  const model::ModelConfig c = find_preset("qwen3-30b-a3b")->config;
  ASSERT_TRUE(c.moe());
  const auto tensors = standard_tensors(c, DType::Q4_0);
  const WeightsSummary all = summarize_weights(tensors);
  const WeightsSummary w = summarize_weights(tensors, expert_fraction(c));
  EXPECT_DOUBLE_EQ(expert_fraction(c), 8.0 / 128.0);
  uint64_t stacks = 0;
  for (const auto& t : tensors) {
    if (t.dims.size() == 3) stacks += t.n_bytes();
    if (t.name.find("ffn_gate_inp") != std::string::npos) EXPECT_EQ(t.type, DType::F32) << "routers stay F32";
  }
  EXPECT_EQ(w.expert_stack_bytes, stacks);
  EXPECT_EQ(w.bytes_read_per_token, all.bytes_read_per_token - stacks + stacks / 16);
  // Published: 3.3 B activated parameters per token, the embedding table included (here not a matmul: a lookup).
  EXPECT_NEAR(static_cast<double>(w.n_matmul_params) + 2048.0 * 151936, 3.3e9, 0.1e9);
  EXPECT_DOUBLE_EQ(w.bytes_read_per_step(1), static_cast<double>(w.bytes_read_per_token));
  // 16 tokens with independent choices hit 1 - (15/16)^16 = 64.4 % of the experts.
  EXPECT_NEAR(w.bytes_read_per_step(16) - (w.bytes_read_per_token - stacks / 16.0), stacks * 0.644, stacks * 0.001);
  EXPECT_LE(w.bytes_read_per_step(100000), static_cast<double>(all.bytes_read_per_token));
}

TEST(Weights, RetypeMatricesKeepsVectorsAndFallsBackOnOddWidths) {
  const std::vector<TensorSpec> t = {{"a.weight", {512, 4}, DType::F16},
                                     {"b.weight", {896, 4}, DType::F16},   // 896 % 256 != 0, % 32 == 0
                                     {"c.weight", {80, 4}, DType::F16},    // 80 % 32 != 0
                                     {"n.weight", {512}, DType::F32}};
  const auto r = retype_matrices(t, DType::Q4_K);
  EXPECT_EQ(r[0].type, DType::Q4_K);
  EXPECT_EQ(r[1].type, DType::Q8_0);
  EXPECT_EQ(r[2].type, DType::F16);
  EXPECT_EQ(r[3].type, DType::F32);
  EXPECT_EQ(r[0].n_bytes(), 2u * 144 * 4);
  EXPECT_EQ(r[1].n_bytes(), 28u * 34 * 4);
}

TEST(Weights, TiedEmbeddingsAreReadAsTheOutputProjection) {
  model::ModelConfig c = find_preset("llama-3.2-1b")->config;
  ASSERT_TRUE(c.tied_embeddings);
  const WeightsSummary w = summarize_weights(standard_tensors(c, DType::BF16));
  const uint64_t embd_bytes = 2048ull * 128256 * 2;
  // Read whole as the output projection, plus one row for the lookup.
  EXPECT_EQ(w.bytes_read_per_token, w.total_bytes + 2048 * 2);
  EXPECT_EQ(w.n_matmul_params, w.n_params - 2048 * 33 /*norms*/);
  EXPECT_GT(w.total_bytes, embd_bytes);
  EXPECT_FALSE(w.quantized);
}

// Parameter counts published by the model authors (Hugging Face model cards / safetensors metadata).
TEST(Presets, ParameterCountsMatchPublishedModels) {
  const std::pair<const char*, int64_t> published[] = {
      {"tinyllama-1.1b", 1100048384},  {"llama-3.2-1b", 1235814400}, {"llama-3-8b", 8030261248},
      {"llama-3-70b", 70553706496},    {"qwen2.5-0.5b", 494032768},  {"qwen2.5-7b", 7615616512},
      {"mistral-7b", 7241732096},      {"llama-2-7b", 6738415616},   {"qwen3-0.6b", 596049920},
      {"qwen3-8b", 8190735360},        {"qwen3-30b-a3b", 30532122624}, {"mixtral-8x7b", 46702792704},
      {"phi-3-mini", 3821079552},      {"gemma-2-2b", 2614341888},   {"gemma-3-1b", 999885952},
      {"gpt-oss-20b", 20914757184},
  };
  for (const auto& [name, n_params] : published) {
    auto p = find_preset(name);
    ASSERT_TRUE(p.ok()) << name;
    EXPECT_EQ(summarize_weights(standard_tensors(p->config, DType::BF16)).n_params, n_params) << name;
  }
}

TEST(Presets, UnknownPresetListsTheKnownOnes) {
  auto p = find_preset("llama-9");
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.error().message.find("unknown model preset \"llama-9\""), std::string::npos) << p.error().message;
  EXPECT_NE(p.error().message.find("tinyllama-1.1b"), std::string::npos);
  EXPECT_TRUE(find_preset("LLAMA-3-8B").ok());
}

TEST(Presets, Qwen05bWithQ4KFallsBackToQ8_0ForItsOddWidth) {
  const auto c = find_preset("qwen2.5-0.5b")->config;
  const WeightsSummary w = summarize_weights(standard_tensors(c, DType::Q4_K));
  // Every matrix has 896 or 4864 columns; 896 is not a multiple of 256, 4864 = 19 × 256 is.
  bool saw_q8 = false, saw_q4k = false;
  for (const auto& t : w.by_type) {
    saw_q8 |= t.type == DType::Q8_0;
    saw_q4k |= t.type == DType::Q4_K;
  }
  EXPECT_TRUE(saw_q8);
  EXPECT_TRUE(saw_q4k);
}

}  // namespace
}  // namespace kairo::plan
