// `write_synth_model`: deterministic bytes, the requested shape and types, a working tokenizer, a model that runs.
#include "convert/synth.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <fstream>
#include <iterator>

#include "convert/convert_test_util.h"
#include "convert/quantize_model.h"
#include "gguf/gguf_file.h"
#include "model/model.h"
#include "tensor/dequant.h"
#include "test_paths.h"
#include "tokenizer/tokenizer.h"

namespace kairo::convert {
namespace {

using testing::read_all;
using testing::temp_path;

// A small llama: 2 layers, dim 256 (so K-quants apply), GQA 8/2, vocab 600 (> the 512-token demo tokenizer).
SynthOptions small_llama(const std::string& scheme, uint64_t seed = 7) {
  SynthOptions o;
  model::ModelConfig& c = o.config;
  c.arch = "llama";
  c.n_layers = 2;
  c.dim = 256;
  c.n_heads = 8;
  c.n_kv_heads = 2;
  c.head_dim = 32;
  c.ffn_dim = 512;
  c.n_vocab = 600;
  c.context_length = 256;
  c.rope.freq_base = 10000.0f;
  o.scheme = *parse_quant_scheme(scheme);
  o.seed = seed;
  o.tokenizer_path = kairo::testing::demo_model_path();
  return o;
}

Result<SynthReport> synth(const SynthOptions& o, const std::string& path, int n_threads = 2) {
  ThreadPool pool(n_threads);
  return write_synth_model(o, path, pool);
}

TEST(Synth, SameSeedSameBytesWhateverTheThreadCount) {
  const std::string a = temp_path("a.gguf"), b = temp_path("b.gguf"), c = temp_path("c.gguf");
  ASSERT_TRUE(synth(small_llama("Q4_K_M", 7), a, 2).ok());
  ASSERT_TRUE(synth(small_llama("Q4_K_M", 7), b, 1).ok());
  ASSERT_TRUE(synth(small_llama("Q4_K_M", 8), c, 2).ok());
  const auto bytes_a = read_all(a);
  EXPECT_GT(bytes_a.size(), 500000u);
  EXPECT_TRUE(bytes_a == read_all(b));
  const auto bytes_c = read_all(c);
  ASSERT_EQ(bytes_a.size(), bytes_c.size());  // same shape and types, other weights
  EXPECT_FALSE(bytes_a == bytes_c);
  for (const auto& p : {a, b, c}) std::remove(p.c_str());
}

TEST(Synth, F32FileQuantizedIsTheFileSynthesizedInThatType) {
  const std::string f32 = temp_path("f32.gguf"), direct = temp_path("direct.gguf"), q = temp_path("q.gguf");
  ASSERT_TRUE(synth(small_llama("F32"), f32).ok());
  ASSERT_TRUE(synth(small_llama("Q4_K_M"), direct).ok());
  ThreadPool pool(2);
  QuantizeOptions o;
  o.scheme = *parse_quant_scheme("Q4_K_M");
  auto r = quantize_model(f32, q, o, pool);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(read_all(q) == read_all(direct));
  for (const auto& p : {f32, direct, q}) std::remove(p.c_str());
}

TEST(Synth, WeightsAreNormalWithTheRequestedSpreadAndNormsAreOne) {
  const std::string path = temp_path("dist.gguf");
  ASSERT_TRUE(synth(small_llama("F32"), path).ok());
  auto f = gguf::File::open(path);
  ASSERT_TRUE(f.ok());
  const gguf::TensorInfo* w = f->find_tensor("blk.0.ffn_up.weight");
  ASSERT_NE(w, nullptr);
  const float* v = reinterpret_cast<const float*>(w->data);
  const int64_t n = w->n_elements();  // 131072 samples
  double sum = 0, sum_sq = 0;
  int64_t beyond_2sd = 0;
  for (int64_t i = 0; i < n; ++i) {
    sum += v[i];
    sum_sq += double(v[i]) * v[i];
    beyond_2sd += std::fabs(v[i]) > 0.04f;
  }
  const double mean = sum / n, sd = std::sqrt(sum_sq / n - mean * mean);
  EXPECT_NEAR(mean, 0.0, 0.0005);
  EXPECT_NEAR(sd, 0.02, 0.0005);
  EXPECT_NEAR(double(beyond_2sd) / n, 0.0455, 0.004);  // a Gaussian's mass beyond 2 sigma
  const gguf::TensorInfo* norm = f->find_tensor("blk.1.attn_norm.weight");
  ASSERT_NE(norm, nullptr);
  EXPECT_EQ(norm->type, DType::F32);
  for (int i = 0; i < 256; ++i) ASSERT_EQ(reinterpret_cast<const float*>(norm->data)[i], 1.0f);
  std::remove(path.c_str());
}

TEST(Synth, ShapeMetadataAndTypesFollowTheScheme) {
  const std::string path = temp_path("shape.gguf");
  auto report = synth(small_llama("Q4_K_M"), path);
  ASSERT_TRUE(report.ok()) << report.error().message;
  EXPECT_EQ(report->n_vocab, 600);
  EXPECT_EQ(report->n_tokenizer_tokens, 512);
  EXPECT_EQ(report->n_dummy_tokens, 88);
  // embedding + output 2 x 600 x 256, per layer q/o 256^2, k/v 64 x 256, gate/up/down 512 x 256, 2 norms.
  EXPECT_EQ(report->n_params, 2u * 600 * 256 + 256 + 2u * (2 * 256 * 256 + 2 * 64 * 256 + 3 * 512 * 256 + 2 * 256));
  auto f = gguf::File::open(path);
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(*f->get_uint("general.file_type"), 15u);
  EXPECT_EQ(*f->get_uint("llama.attention.head_count_kv"), 2u);
  EXPECT_EQ(*f->get_uint("kairo.synth.seed"), 7u);
  EXPECT_EQ(f->find_tensor("output.weight")->type, DType::Q6_K);
  EXPECT_EQ(f->find_tensor("token_embd.weight")->type, DType::Q4_K);
  EXPECT_EQ(f->find_tensor("blk.0.attn_v.weight")->type, DType::Q4_K);  // use_more_bits(0, 2) is false
  EXPECT_EQ(f->find_tensor("blk.1.attn_v.weight")->type, DType::Q6_K);
  EXPECT_EQ(f->find_tensor("blk.1.ffn_down.weight")->type, DType::Q6_K);
  EXPECT_EQ(f->find_tensor("token_embd.weight")->dims, (std::vector<int64_t>{256, 600}));
  std::remove(path.c_str());
}

TEST(Synth, TokenizerIsCopiedAndPaddedWithUnusedTokens) {
  const std::string path = temp_path("tok.gguf");
  ASSERT_TRUE(synth(small_llama("Q8_0"), path).ok());
  auto f = gguf::File::open(path);
  auto src = gguf::File::open(kairo::testing::demo_model_path());
  ASSERT_TRUE(f.ok() && src.ok());
  const auto& tokens = f->find("tokenizer.ggml.tokens")->items();
  ASSERT_EQ(tokens.size(), 600u);
  EXPECT_EQ(*tokens[511].as_string(), *src->find("tokenizer.ggml.tokens")->items()[511].as_string());
  EXPECT_EQ(*tokens[512].as_string(), "<dummy_512>");
  EXPECT_EQ(*tokens[599].as_string(), "<dummy_599>");
  EXPECT_EQ(*f->find("tokenizer.ggml.token_type")->items()[599].as_int(), 5);
  EXPECT_EQ(f->find("tokenizer.ggml.scores")->items().size(), 600u);
  auto tok = tokenizer::Tokenizer::from_gguf(*f);
  auto ref = tokenizer::Tokenizer::from_gguf(*src);
  ASSERT_TRUE(tok.ok() && ref.ok()) << (tok.ok() ? "" : tok.error().message);
  EXPECT_EQ((*tok)->n_vocab(), 600);
  const std::string text = "The machine dreams of electric sheep.";
  EXPECT_EQ((*tok)->encode(text, true, false), (*ref)->encode(text, true, false));
  std::remove(path.c_str());
}

TEST(Synth, ATokenizerLargerThanTheVocabWidensTheEmbedding) {
  SynthOptions o = small_llama("F16");
  o.config.n_vocab = 100;
  const std::string path = temp_path("wide.gguf");
  auto report = synth(o, path);
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->n_vocab, 512);
  EXPECT_EQ(report->n_dummy_tokens, 0);
  auto f = gguf::File::open(path);
  EXPECT_EQ(f->find_tensor("output.weight")->dims, (std::vector<int64_t>{256, 512}));
  std::remove(path.c_str());
}

TEST(Synth, ModelsLoadAndRunForBothArchitectures) {
  for (const char* arch : {"llama", "qwen2"}) {
    SynthOptions o = small_llama("Q8_0");
    o.config.arch = arch;
    o.config.qkv_bias = std::string(arch) == "qwen2";
    o.config.tied_embeddings = std::string(arch) == "qwen2";
    const std::string path = temp_path(std::string(arch) + ".gguf");
    ASSERT_TRUE(synth(o, path).ok()) << arch;
    auto m = model::Model::load(path);
    ASSERT_TRUE(m.ok()) << m.error().message;
    const model::ModelConfig& c = (*m)->config();
    EXPECT_EQ(c.n_layers, 2);
    EXPECT_EQ(c.n_kv_heads, 2);
    EXPECT_EQ(c.head_dim, 32);
    EXPECT_EQ(c.n_vocab, 600);
    EXPECT_EQ(c.qkv_bias, std::string(arch) == "qwen2");
    EXPECT_EQ(c.tied_embeddings, std::string(arch) == "qwen2");
    auto kv = model::KvStorage::create((*m)->shared_device(), c, 4, 16, DType::F16);
    ASSERT_TRUE(kv.ok());
    model::Batch b;
    for (int p = 0; p < 5; ++p) {
      b.token_ids.push_back(10 + p);
      b.positions.push_back(p);
      b.seq_idx.push_back(0);
      b.slot_mapping.push_back(p);
    }
    b.block_tables = {0, 1, 2, 3};
    b.max_blocks_per_seq = 4;
    b.logits_rows = {4};
    std::vector<float> logits;
    ThreadPool pool(2);
    model::StepBuffers buffers((*m)->shared_device());
    (*m)->forward(b, *kv, buffers, logits, pool);
    ASSERT_EQ(logits.size(), 600u);
    double sum_sq = 0;
    for (float x : logits) {
      ASSERT_TRUE(std::isfinite(x));
      sum_sq += double(x) * x;
    }
    EXPECT_GT(sum_sq, 0.0) << arch;
    std::remove(path.c_str());
  }
}

TEST(Synth, BadShapesAndSourcesAreErrors) {
  SynthOptions o = small_llama("F16");
  o.config.n_kv_heads = 3;
  auto r = synth(o, temp_path("bad.gguf"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "--kv-heads 3 must divide --heads 8");
  o = small_llama("F16");
  o.config.arch = "gpt2";
  r = synth(o, temp_path("bad.gguf"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "--arch \"gpt2\" is not supported; use one of llama, qwen2, qwen3, qwen3moe, phi3, gemma2, gemma3, gpt-oss");
  o = small_llama("F16");
  o.tokenizer_path = kairo::testing::shared_path("models/synth-llama-gqa.f16.gguf.missing");
  r = synth(o, temp_path("bad.gguf"));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("synth-llama-gqa.f16.gguf.missing"), std::string::npos);
  EXPECT_FALSE(std::ifstream(temp_path("bad.gguf")).good());
}

}  // namespace
}  // namespace kairo::convert
