// phi3's long-context rope (Phi-3-*-128k, Phi-3.5, Phi-4-mini): rope_factors_long / rope_factors_short divide the
// rope angles, the long set when the model runs at a context above rope.scaling.original_context_length, and
// rope.scaling.attn_factor scales cos and sin (llama.cpp's behaviour). Checked on ../shared's synth-phi3 rewritten
// with those tensors and keys:
//  - the factors must act exactly as the llama-3 rope_freqs path does with the same values (that path matches
//    llama.cpp's log-probabilities: logprob_reference_test), so long factors == a rope_freqs tensor, bit for bit;
//  - the context decides the set: the engine's --max-model-len (Model::set_context_length);
//  - the attention factor is applied (against the rotation it must give, computed here) and changes the outputs;
//  - incomplete files are refused with what is missing.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "engine/generator.h"
#include "gguf/writer.h"
#include "model/model.h"
#include "test_paths.h"

namespace kairo::engine {
namespace {

constexpr int kPairs = 32;  // synth-phi3: rope.dimension_count 64

std::vector<uint8_t> f32_bytes(const std::vector<float>& v) {
  std::vector<uint8_t> out(v.size() * 4);
  std::memcpy(out.data(), v.data(), out.size());
  return out;
}

std::vector<float> factors(float base, float step) {
  std::vector<float> f(kPairs);
  for (int i = 0; i < kPairs; ++i) f[static_cast<size_t>(i)] = base + step * static_cast<float>(i);
  return f;
}

struct Variant {
  std::vector<float> long_factors, short_factors, rope_freqs;  // empty: no such tensor
  double attn_factor = 0;                                      // 0: no key
  uint32_t context_length = 131072;
};

// synth-phi3.f16 with the variant's tensors and keys (original context 4096, as the file has).
std::vector<uint8_t> phi3_file(const Variant& v) {
  auto src = gguf::File::open(kairo::testing::shared_path("models/synth-phi3.f16.gguf"));
  EXPECT_TRUE(src.ok());
  gguf::Writer w;
  for (const auto& [key, value] : src->metadata()) {
    if (key == "phi3.context_length") w.set(key, gguf::Value::u32(v.context_length));
    else w.set(key, value);
  }
  if (v.attn_factor > 0) w.set("phi3.rope.scaling.attn_factor", gguf::Value::f32(static_cast<float>(v.attn_factor)));
  for (const gguf::TensorInfo& t : src->tensors())
    w.add_tensor(t.name, t.type, t.dims, std::vector<uint8_t>(t.data, t.data + t.n_bytes));
  if (!v.long_factors.empty()) w.add_tensor("rope_factors_long.weight", DType::F32, {kPairs}, f32_bytes(v.long_factors));
  if (!v.short_factors.empty())
    w.add_tensor("rope_factors_short.weight", DType::F32, {kPairs}, f32_bytes(v.short_factors));
  if (!v.rope_freqs.empty()) w.add_tensor("rope_freqs.weight", DType::F32, {kPairs}, f32_bytes(v.rope_freqs));
  return w.to_bytes();
}

// The model reads its tensors from the file's bytes, so they live beside it (a moved vector keeps its buffer).
struct Loaded {
  std::vector<uint8_t> bytes;
  std::unique_ptr<model::Model> model;
};

Result<Loaded> load(std::vector<uint8_t> bytes) {
  Loaded out{std::move(bytes), nullptr};
  KAIRO_TRY_ASSIGN(gguf::File f, gguf::File::parse(out.bytes.data(), out.bytes.size(), "phi3-long.gguf"));
  KAIRO_TRY_ASSIGN(out.model, model::Model::from_file(std::move(f)));
  return out;
}

// The raw logits of the first 3 steps of a 40-token prompt (positions far enough for the factors to matter).
std::vector<std::vector<float>> logits_of(model::Model& m) {
  std::vector<int32_t> prompt;
  for (int i = 0; i < 40; ++i) prompt.push_back(1 + (i * 37) % 500);
  GenerateOptions opts;
  opts.max_tokens = 3;
  opts.sampling.temperature = 0;
  opts.n_logit_steps = 3;
  ThreadPool pool(2);
  auto r = generate(m, prompt, opts, pool);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
  return r.ok() ? r->step_logits : std::vector<std::vector<float>>{};
}

const std::vector<float> kLong = factors(1.0f, 0.9f), kShort = factors(1.0f, 0.05f);

TEST(LongRope, LongFactorsActExactlyAsRopeFreqsAboveTheOriginalContext) {
  auto with_long = load(phi3_file({kLong, kShort, {}, 0, 131072}));
  auto with_freqs = load(phi3_file({{}, {}, kLong, 0, 131072}));
  ASSERT_TRUE(with_long.ok()) << with_long.error().message;
  ASSERT_TRUE(with_freqs.ok()) << with_freqs.error().message;
  EXPECT_EQ(with_long->model->weights().rope_freq_factors, with_long->model->weights().rope_factors_long);
  const auto a = logits_of(*with_long->model), b = logits_of(*with_freqs->model);
  ASSERT_EQ(a.size(), 3u);
  EXPECT_EQ(a, b);
  auto plain = load(phi3_file({{}, {}, {}, 0, 131072}));
  ASSERT_TRUE(plain.ok());
  EXPECT_NE(logits_of(*plain->model), a);  // the factors do change the outputs
}

TEST(LongRope, TheContextPicksTheSetAsLlamaCppDoes) {
  // Running at a context of at most the original 4096 uses the short set: as rope_freqs = short.
  auto m = load(phi3_file({kLong, kShort, {}, 0, 131072}));
  auto with_short = load(phi3_file({{}, {}, kShort, 0, 131072}));
  ASSERT_TRUE(m.ok() && with_short.ok());
  m->model->set_context_length(4096);
  EXPECT_EQ(m->model->weights().rope_freq_factors, m->model->weights().rope_factors_short);
  EXPECT_EQ(logits_of(*m->model), logits_of(*with_short->model));
  m->model->set_context_length(4097);
  EXPECT_EQ(m->model->weights().rope_freq_factors, m->model->weights().rope_factors_long);
  // A file whose own context is the original one starts on the short set.
  auto short_ctx = load(phi3_file({kLong, kShort, {}, 0, 4096}));
  ASSERT_TRUE(short_ctx.ok());
  EXPECT_EQ(short_ctx->model->weights().rope_freq_factors, short_ctx->model->weights().rope_factors_short);
}

TEST(LongRope, AttentionFactorScalesCosAndSin) {
  // Phi-3-mini-128k: scale 131072 / 4096 = 32, attn_factor = sqrt(1 + ln 32 / ln 4096) (the converter's formula).
  const double attn = std::sqrt(1 + std::log(32.0) / std::log(4096.0));
  auto m = load(phi3_file({kLong, kShort, {}, attn, 131072}));
  ASSERT_TRUE(m.ok()) << m.error().message;
  const model::ModelConfig& c = m->model->config();
  EXPECT_NEAR(c.rope.mscale, attn, 1e-6);
  // The rotation the reference gives with the model's rope: cos/sin of pos * base^(-2i/64) / long_i, times attn.
  kernels::RopeParams p = c.rope;
  p.n_heads = 1;
  p.freq_factors = m->model->weights().rope_freq_factors;
  std::vector<float> x(64, 0.0f);
  for (int i = 0; i < kPairs; ++i) x[static_cast<size_t>(i)] = 1.0f;  // NEOX: first half real, second imaginary
  const int32_t pos = 3000;
  kernels::reference_backend().rope(x.data(), &pos, 1, p);
  for (int i = 0; i < kPairs; ++i) {
    const double theta = pos * std::pow(10000.0, -2.0 * i / 64) / kLong[static_cast<size_t>(i)];
    EXPECT_NEAR(x[static_cast<size_t>(i)], std::cos(theta) * attn, 2e-4) << "pair " << i;
    EXPECT_NEAR(x[static_cast<size_t>(i + kPairs)], std::sin(theta) * attn, 2e-4) << "pair " << i;
  }
  auto without = load(phi3_file({kLong, kShort, {}, 0, 131072}));
  ASSERT_TRUE(without.ok());
  EXPECT_NE(logits_of(*m->model), logits_of(*without->model));
}

TEST(LongRope, IncompleteOrConflictingFilesAreRefused) {
  auto only_long = load(phi3_file({kLong, {}, {}, 0, 131072}));
  ASSERT_FALSE(only_long.ok());
  EXPECT_NE(only_long.error().message.find("needs both rope_factors_long and rope_factors_short"), std::string::npos)
      << only_long.error().message;
  auto both = load(phi3_file({kLong, kShort, kLong, 0, 131072}));
  ASSERT_FALSE(both.ok());
  EXPECT_NE(both.error().message.find("no other rope scaling"), std::string::npos) << both.error().message;
  auto bad_factor = load(phi3_file({kLong, kShort, {}, 100.0, 131072}));
  ASSERT_FALSE(bad_factor.ok());
  EXPECT_NE(bad_factor.error().message.find("rope.scaling.attn_factor is 100"), std::string::npos)
      << bad_factor.error().message;
}

}  // namespace
}  // namespace kairo::engine
