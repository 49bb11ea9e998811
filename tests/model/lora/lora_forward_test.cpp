// Adapters applied in the forward pass (model/lora/lora_step.h): the same logits as the model with the adapter merged
// in (`kairo lora merge`), exactly the base's with scale 0 or adapter 0, and a token's logits independent of which
// other adapters' tokens share its step.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "convert/lora/lora_test_models.h"
#include "convert/lora/merge_adapter.h"
#include "convert/lora/synth_adapter.h"
#include "model/lora/adapter.h"
#include "model/model.h"

namespace kairo::model::lora {
namespace {

using convert::testing::temp_path;
using convert::testing::write_small_base;

std::string synth(const std::string& base, const std::string& name, uint64_t seed, int rank = 8) {
  const std::string path = temp_path(name);
  convert::AdapterSynthOptions o;
  o.rank = rank;
  o.type = DType::F32;
  o.seed = seed;
  o.strength = 0.3f;
  auto r = convert::write_synth_adapter(base, path, o);
  EXPECT_TRUE(r.ok()) << r.error().message;
  return path;
}

std::unique_ptr<Model> load(const std::string& path) {
  auto m = Model::load(path);
  EXPECT_TRUE(m.ok()) << m.error().message;
  return m.ok() ? std::move(*m) : nullptr;
}

int add(Model& m, const std::string& adapter_path, float scale = 1.0f) {
  LoadOptions o;
  o.scale = scale;
  auto a = load_adapter(adapter_path, m.file(), m.config(), o);
  EXPECT_TRUE(a.ok()) << a.error().message;
  auto idx = m.add_adapter(*a);
  EXPECT_TRUE(idx.ok()) << idx.error().message;
  return idx.ok() ? *idx : 0;
}

// One prompt of a step: its tokens and adapter.
struct Seq {
  std::vector<int32_t> tokens;
  int32_t adapter = 0;
};

// Runs the prompts as one step (each sequence in its own 4 blocks of 16) and returns each one's last-token logits.
std::vector<std::vector<float>> run_step(Model& m, const std::vector<Seq>& seqs) {
  auto kv = KvStorage::create(m.shared_device(), m.config(), static_cast<int64_t>(4 * seqs.size()), 16, DType::F16);
  EXPECT_TRUE(kv.ok());
  Batch b;
  b.max_blocks_per_seq = 4;
  for (size_t s = 0; s < seqs.size(); ++s) {
    for (int blk = 0; blk < 4; ++blk) b.block_tables.push_back(static_cast<int32_t>(4 * s + blk));
    for (size_t p = 0; p < seqs[s].tokens.size(); ++p) {
      b.token_ids.push_back(seqs[s].tokens[p]);
      b.positions.push_back(static_cast<int32_t>(p));
      b.seq_idx.push_back(static_cast<int32_t>(s));
      b.slot_mapping.push_back(static_cast<int64_t>(64 * s + p));
      b.adapter_idx.push_back(seqs[s].adapter);
    }
    b.logits_rows.push_back(static_cast<int32_t>(b.token_ids.size() - 1));
  }
  std::vector<float> logits;
  ThreadPool pool(2);
  StepBuffers buffers(m.shared_device());
  m.forward(b, *kv, buffers, logits, pool);
  const size_t n_vocab = static_cast<size_t>(m.config().n_vocab);
  std::vector<std::vector<float>> out;
  for (size_t s = 0; s < seqs.size(); ++s)
    out.emplace_back(logits.begin() + static_cast<ptrdiff_t>(s * n_vocab),
                     logits.begin() + static_cast<ptrdiff_t>((s + 1) * n_vocab));
  return out;
}

const std::vector<int32_t> kPrompt = {10, 17, 24, 31, 38};

float max_abs_diff(const std::vector<float>& a, const std::vector<float>& b) {
  float d = 0;
  for (size_t i = 0; i < a.size(); ++i) d = std::max(d, std::fabs(a[i] - b[i]));
  return d;
}

bool bitwise_equal(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// The adapter applied at run time against the merged model: the difference is the merge's re-encoding of W + s·BA
// (half an f16 ulp per weight; Q8_0's block rounding) and the order of the f32 sums, both far below the adapter's
// own effect on the logits.
TEST(LoraForward, MatchesTheMergedModel) {
  for (const std::string scheme : {"F16", "Q8_0"}) {
    const std::string base = write_small_base(scheme, "fwd_" + scheme + ".gguf");
    const std::string ad = synth(base, "fwd_" + scheme + "_ad.gguf", 5);
    const std::string merged = temp_path("fwd_" + scheme + "_merged.gguf");
    ThreadPool pool(2);
    convert::MergeOptions mo;
    mo.scale = 0.75f;
    auto mr = convert::merge_adapter(base, ad, merged, mo, pool);
    ASSERT_TRUE(mr.ok()) << mr.error().message;

    auto m = load(base);
    ASSERT_TRUE(m);
    const int idx = add(*m, ad, 0.75f);
    ASSERT_EQ(idx, 1);
    const auto with_adapter = run_step(*m, {{kPrompt, idx}})[0];
    const auto base_logits = run_step(*m, {{kPrompt, 0}})[0];
    auto mm = load(merged);
    ASSERT_TRUE(mm);
    const auto merged_logits = run_step(*mm, {{kPrompt, 0}})[0];

    const float effect = max_abs_diff(with_adapter, base_logits);
    const float error = max_abs_diff(with_adapter, merged_logits);
    float amax = 0;
    for (float v : merged_logits) amax = std::max(amax, std::fabs(v));
    // F16: the merged weights differ by <= 2^-11 relative; Q8_0: by up to amax/254 per block.
    const float tol = (scheme == "F16" ? 2e-3f : 2e-2f) * amax;
    std::printf("%s base: adapter vs merged max |diff| %.3g, adapter vs base %.3g, max |logit| %.3g\n",
                scheme.c_str(), error, effect, amax);
    EXPECT_LE(error, tol) << scheme << ": effect " << effect << ", logits up to " << amax;
    EXPECT_GT(effect, 20 * error) << scheme << ": the adapter's effect must dwarf the merge rounding";
    for (const auto& p : {base, ad, merged}) std::remove(p.c_str());
  }
}

TEST(LoraForward, ZeroScaleAndAdapterZeroAreTheBaseBitForBit) {
  const std::string base = write_small_base("Q8_0", "zero.gguf");
  const std::string ad = synth(base, "zero_ad.gguf", 6);
  auto m = load(base);
  ASSERT_TRUE(m);
  const auto before = run_step(*m, {{kPrompt, 0}})[0];
  const int zero = add(*m, ad, 0.0f);
  const int one = add(*m, ad, 1.0f);
  ASSERT_EQ(zero, 1);
  ASSERT_EQ(one, 2);
  EXPECT_TRUE(bitwise_equal(run_step(*m, {{kPrompt, zero}})[0], before));
  EXPECT_TRUE(bitwise_equal(run_step(*m, {{kPrompt, 0}})[0], before));
  EXPECT_FALSE(bitwise_equal(run_step(*m, {{kPrompt, one}})[0], before));
  // The identity keys the prefix cache: same file, other scale, other identity.
  EXPECT_NE(m->adapters().at(zero).identity, m->adapters().at(one).identity);
  for (const auto& p : {base, ad}) std::remove(p.c_str());
}

// Each sequence's logits in a step of several adapters and the base are bit for bit its logits alone.
TEST(LoraForward, MixedBatchIsBatchInvariant) {
  const std::string base = write_small_base("Q8_0", "mixed.gguf");
  auto m = load(base);
  ASSERT_TRUE(m);
  const std::string a1 = synth(base, "mixed_a1.gguf", 7, 8), a2 = synth(base, "mixed_a2.gguf", 8, 4);
  ASSERT_EQ(add(*m, a1), 1);
  ASSERT_EQ(add(*m, a2), 2);
  std::vector<Seq> seqs;
  for (int s = 0; s < 7; ++s) {
    Seq q;
    for (int p = 0; p < 3 + s; ++p) q.tokens.push_back(5 + 11 * s + 3 * p);
    q.adapter = s % 3;
    seqs.push_back(q);
  }
  const auto together = run_step(*m, seqs);
  for (size_t s = 0; s < seqs.size(); ++s) {
    EXPECT_TRUE(bitwise_equal(run_step(*m, {seqs[s]})[0], together[s])) << "sequence " << s;
  }
  // And the adapters do act: the same prompt differs between them.
  Seq other = seqs[1];
  other.adapter = 2;
  EXPECT_FALSE(bitwise_equal(run_step(*m, {other})[0], together[1]));
  for (const auto& p : {base, a1, a2}) std::remove(p.c_str());
}


// Another user scale over the same matrices (per-request scales) gives bit for bit the logits and the identity of the
// file loaded at that scale, even from an adapter loaded at scale 0; freed indices are reused.
TEST(LoraForward, RescaledAdapterIsTheFileLoadedAtThatScale) {
  const std::string base = write_small_base("Q8_0", "rescaled.gguf");
  const std::string ad = synth(base, "rescaled_ad.gguf", 9), other = synth(base, "rescaled_other.gguf", 10);
  auto m = load(base);
  ASSERT_TRUE(m);
  const int one = add(*m, ad, 1.0f), half = add(*m, ad, 0.5f), zero = add(*m, ad, 0.0f);
  ASSERT_EQ(zero, 3);
  const int half_copy = m->add_rescaled_adapter(one, 0.5f, 10);
  EXPECT_EQ(half_copy, 10);
  EXPECT_EQ(m->adapters().size(), 10);
  EXPECT_FALSE(m->adapters().in_use(4));  // skipped to reach first_idx: free
  EXPECT_EQ(m->adapters().at(half_copy).identity, m->adapters().at(half).identity);
  EXPECT_TRUE(bitwise_equal(run_step(*m, {{kPrompt, half_copy}})[0], run_step(*m, {{kPrompt, half}})[0]));
  const int one_from_zero = m->add_rescaled_adapter(zero, 1.0f, 10);
  EXPECT_EQ(one_from_zero, 11);
  EXPECT_EQ(m->adapters().at(one_from_zero).identity, m->adapters().at(one).identity);
  const auto logits_one = run_step(*m, {{kPrompt, one}})[0];
  EXPECT_TRUE(bitwise_equal(run_step(*m, {{kPrompt, one_from_zero}})[0], logits_one));

  m->remove_adapter(half_copy);
  EXPECT_FALSE(m->adapters().in_use(half_copy));
  EXPECT_EQ(m->add_rescaled_adapter(half, 2.0f, 10), half_copy);  // the freed index again
  m->remove_adapter(one);  // the copies keep the matrices they share with it
  EXPECT_TRUE(bitwise_equal(run_step(*m, {{kPrompt, one_from_zero}})[0], logits_one));
  EXPECT_EQ(add(*m, other), one);  // the lowest free index
  EXPECT_EQ(m->adapters().n_in_use(), 5);
  for (const auto& p : {base, ad, other}) std::remove(p.c_str());
}

}  // namespace
}  // namespace kairo::model::lora
