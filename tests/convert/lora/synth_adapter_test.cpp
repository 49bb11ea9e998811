// `kairo lora synth`: adapters that load back with the asked shapes, rank, alpha and types, deterministically, with
// the documented size of effect.
#include "convert/lora/synth_adapter.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>

#include "gguf/gguf_file.h"
#include "convert/lora/lora_test_models.h"
#include "model/lora/adapter.h"
#include "tensor/dequant.h"

namespace kairo::convert {
namespace {

using testing::read_all;
using testing::temp_path;
using testing::write_small_base;

Result<model::lora::Adapter> load(const std::string& adapter, const std::string& base_path, float scale = 1.0f) {
  KAIRO_TRY_ASSIGN(const gguf::File base, gguf::File::open(base_path));
  KAIRO_TRY_ASSIGN(const model::ModelConfig config, model::read_config(base));
  model::lora::LoadOptions o;
  o.scale = scale;
  return model::lora::load_adapter(adapter, base, config, o);
}

class LoraSynthTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { base_ = new std::string(write_small_base("F16", "synth_base_f16.gguf")); }
  static void TearDownTestSuite() {
    std::remove(base_->c_str());
    delete base_;
  }
  static std::string* base_;
};
std::string* LoraSynthTest::base_ = nullptr;

TEST_F(LoraSynthTest, RoundTripNamesShapesRankAlphaScale) {
  const std::string out = temp_path("rt.gguf");
  AdapterSynthOptions o;
  o.rank = 8;
  o.alpha = 32.0f;
  auto r = write_synth_adapter(*base_, out, o);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->alpha, 32.0f);
  ASSERT_EQ(r->adapted.size(), 14u);  // 7 projections x 2 layers
  EXPECT_TRUE(r->f16_fallback.empty());

  auto f = gguf::File::open(out);
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(*f->get_string("general.type"), "adapter");
  EXPECT_EQ(*f->get_string("adapter.type"), "lora");
  EXPECT_EQ(*f->get_string("general.architecture"), "llama");
  EXPECT_EQ(*f->get_float("adapter.lora.alpha"), 32.0);
  EXPECT_EQ(f->find_tensor("blk.1.ffn_down.weight.lora_a")->dims, (std::vector<int64_t>{96, 8}));
  EXPECT_EQ(f->find_tensor("blk.1.ffn_down.weight.lora_b")->dims, (std::vector<int64_t>{8, 64}));
  EXPECT_EQ(f->find_tensor("blk.0.attn_k.weight.lora_b")->dims, (std::vector<int64_t>{8, 32}));  // 1 KV head
  EXPECT_EQ(f->find_tensor("blk.0.attn_q.weight.lora_a")->type, DType::F16);

  auto a = load(out, *base_, 0.5f);
  ASSERT_TRUE(a.ok()) << a.error().message;
  // The loader lists the pairs in the base file's tensor order (synth writes the file in llama-quantize's order).
  auto fb = gguf::File::open(*base_);
  ASSERT_TRUE(fb.ok());
  std::vector<std::string> want, got;
  for (const gguf::TensorInfo& t : fb->tensors()) {
    if (std::find(r->adapted.begin(), r->adapted.end(), t.name) != r->adapted.end()) want.push_back(t.name);
  }
  for (const auto& w : a->weights) got.push_back(w.base_name);
  EXPECT_EQ(got, want);
  for (const auto& w : a->weights) {
    EXPECT_EQ(w.rank, 8);
    EXPECT_EQ(w.scale, 0.5f * 32.0f / 8.0f) << w.base_name;
  }
  EXPECT_EQ(a->alpha, 32.0f);
  EXPECT_EQ(a->n_params(), r->n_params);
  std::remove(out.c_str());
}

TEST_F(LoraSynthTest, SameSeedSameBytesAndAlphaDefaultsToTheRank) {
  const std::string a = temp_path("s1.gguf"), b = temp_path("s2.gguf"), c = temp_path("s3.gguf");
  AdapterSynthOptions o;
  o.rank = 4;
  o.seed = 5;
  ASSERT_TRUE(write_synth_adapter(*base_, a, o).ok());
  ASSERT_TRUE(write_synth_adapter(*base_, b, o).ok());
  o.seed = 6;
  auto r = write_synth_adapter(*base_, c, o);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->alpha, 4.0f);
  EXPECT_TRUE(read_all(a) == read_all(b));
  EXPECT_FALSE(read_all(a) == read_all(c));
  for (const auto& p : {a, b, c}) std::remove(p.c_str());
}

TEST_F(LoraSynthTest, TargetsAndTypes) {
  const std::string out = temp_path("tq.gguf");
  AdapterSynthOptions o;
  o.rank = 8;
  o.targets = *parse_lora_targets("q,v");
  o.type = DType::Q8_0;
  auto r = write_synth_adapter(*base_, out, o);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->adapted, (std::vector<std::string>{"blk.0.attn_q.weight", "blk.0.attn_v.weight", "blk.1.attn_q.weight",
                                                  "blk.1.attn_v.weight"}));
  // lora_b's rows hold `rank` = 8 values: not a Q8_0 block, so those are F16, as llama.cpp's converter falls back.
  EXPECT_EQ(r->f16_fallback.size(), 4u);
  auto f = gguf::File::open(out);
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->find_tensor("blk.0.attn_q.weight.lora_a")->type, DType::Q8_0);
  EXPECT_EQ(f->find_tensor("blk.0.attn_q.weight.lora_b")->type, DType::F16);

  o.rank = 32;
  o.targets = {"down"};
  r = write_synth_adapter(*base_, out, o);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(r->f16_fallback.empty());
  auto a = load(out, *base_);
  ASSERT_TRUE(a.ok()) << a.error().message;
  ASSERT_EQ(a->weights.size(), 2u);
  EXPECT_EQ(a->weights[0].a_type, DType::Q8_0);
  EXPECT_EQ(a->weights[0].b_type, DType::Q8_0);

  for (DType t : {DType::F32, DType::BF16}) {
    o.type = t;
    o.rank = 4;
    ASSERT_TRUE(write_synth_adapter(*base_, out, o).ok());
    auto loaded = load(out, *base_);
    ASSERT_TRUE(loaded.ok()) << loaded.error().message;
    EXPECT_EQ(loaded->weights[0].a_type, t);
  }
  std::remove(out.c_str());
}

// The documented choice: the delta scale · B·A has elements of std `strength` x the base weights' RMS.
TEST_F(LoraSynthTest, DeltaIsStrengthTimesTheBaseRms) {
  const std::string out = temp_path("strength.gguf");
  AdapterSynthOptions o;
  o.rank = 16;
  o.alpha = 8.0f;  // scale 0.5: sigma_b compensates
  o.strength = 0.25f;
  o.targets = {"up"};
  o.type = DType::F32;
  ASSERT_TRUE(write_synth_adapter(*base_, out, o).ok());
  auto a = load(out, *base_);
  ASSERT_TRUE(a.ok());
  const model::lora::LoraWeight& w = a->weights[0];
  double sum_sq = 0;
  for (int64_t o_row = 0; o_row < w.n_out; ++o_row) {
    for (int64_t i = 0; i < w.n_in; ++i) {
      double d = 0;
      for (int k = 0; k < w.rank; ++k) d += double(w.b[o_row * w.rank + k]) * w.a[k * w.n_in + i];
      sum_sq += (w.scale * d) * (w.scale * d);
    }
  }
  const double delta_std = std::sqrt(sum_sq / double(w.n_in * w.n_out));
  // synth's init_std 0.02 is the base RMS; 96x64 elements of a rank-16 product estimate the std within ~10 %.
  EXPECT_NEAR(delta_std, 0.25 * 0.02, 0.25 * 0.02 * 0.2);
  std::remove(out.c_str());
}

TEST_F(LoraSynthTest, UserErrors) {
  const std::string out = temp_path("err.gguf");
  AdapterSynthOptions o;
  o.rank = 0;
  EXPECT_EQ(write_synth_adapter(*base_, out, o).error().message, "--rank 0: the rank must be 1 to 1024");
  o.rank = 64;
  o.max_rank = 32;
  EXPECT_EQ(write_synth_adapter(*base_, out, o).error().message, "--rank 64: the rank must be 1 to 32");
  o = {};
  o.type = DType::Q4_0;
  EXPECT_EQ(write_synth_adapter(*base_, out, o).error().message,
            "--type Q4_0: adapter tensors are f32, f16, bf16 or q8_0");
  EXPECT_EQ(parse_lora_targets("q,attn").error().message,
            "--targets: unknown projection \"attn\"; use a comma-separated list of q, k, v, o, gate, up, down");
  EXPECT_EQ(write_synth_adapter(*base_, *base_, {}).error().message,
            "the output \"" + *base_ + "\" is the base model; write to another file");
}

TEST(LoraSynthMoe, DenseFeedForwardTargetsNeedADenseModel) {
  SynthOptions so = testing::small_base_options("F16");
  so.config.n_experts = 4;
  so.config.n_experts_used = 2;
  so.config.expert_ffn_dim = 32;
  const std::string base = temp_path("moe.gguf"), out = temp_path("moe_ad.gguf");
  ThreadPool pool(2);
  ASSERT_TRUE(write_synth_model(so, base, pool).ok());
  AdapterSynthOptions o;
  o.rank = 4;
  o.targets = {"q", "gate"};
  EXPECT_EQ(write_synth_adapter(base, out, o).error().message,
            "--targets gate: the base model " + base + " has no such projection (its feed-forward is a mixture of "
            "experts, which adapters cannot target yet)");
  o.targets = {};  // default: every projection the base has, here attention only
  auto r = write_synth_adapter(base, out, o);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->adapted.size(), 8u);
  std::remove(base.c_str());
  std::remove(out.c_str());
}

}  // namespace
}  // namespace kairo::convert
