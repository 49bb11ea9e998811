// `kairo lora merge`: W + scale · B·A against a scalar computation from the files' own bytes, exactly for F32 and
// within the re-encoding's rounding for F16 and Q8_0; scale 0 reproduces the base bit for bit; the merged model
// loads and runs, and its logits move.
#include "convert/lora/merge_adapter.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "convert/lora/lora_test_models.h"
#include "convert/lora/synth_adapter.h"
#include "gguf/gguf_file.h"
#include "gguf/writer.h"
#include "tensor/dequant.h"

namespace kairo::convert {
namespace {

using testing::last_logits;
using testing::temp_path;
using testing::write_small_base;

std::vector<float> dequantized(const gguf::TensorInfo& t) {
  const int64_t n_cols = t.dims[0], n_rows = t.n_rows();
  std::vector<float> out(static_cast<size_t>(n_cols * n_rows));
  for (int64_t r = 0; r < n_rows; ++r) {
    dequantize_row(t.type, t.data + r * row_bytes(t.type, n_cols), out.data() + r * n_cols, n_cols);
  }
  return out;
}

// W + s · B·A from the two files alone (not the adapter loader): [n_out, n_in], the sum in float with k ascending as
// merge_row documents, so an F32 result is bit-exact.
std::vector<float> reference(const gguf::File& base, const gguf::File& adapter, const std::string& name, float s) {
  const gguf::TensorInfo& w = *base.find_tensor(name);
  const std::vector<float> a = dequantized(*adapter.find_tensor(name + ".lora_a"));
  const std::vector<float> b = dequantized(*adapter.find_tensor(name + ".lora_b"));
  const int64_t n_in = w.dims[0], n_out = w.dims[1];
  const int64_t rank = adapter.find_tensor(name + ".lora_b")->dims[0];
  std::vector<float> out = dequantized(w);
  for (int64_t o = 0; o < n_out; ++o) {
    for (int64_t i = 0; i < n_in; ++i) {
      float acc = 0;
      for (int64_t k = 0; k < rank; ++k) acc += b[o * rank + k] * a[k * n_in + i];
      out[o * n_in + i] = out[o * n_in + i] + s * acc;
    }
  }
  return out;
}

std::string synth_adapter(const std::string& base, const std::string& name, int rank, float alpha,
                          DType type = DType::F16) {
  const std::string path = temp_path(name);
  AdapterSynthOptions o;
  o.rank = rank;
  o.alpha = alpha;
  o.type = type;
  o.seed = 3;
  o.strength = 0.5f;  // a large delta: rounding in the merged F16/Q8_0 rows is measured against a real change
  auto r = write_synth_adapter(base, path, o);
  EXPECT_TRUE(r.ok()) << r.error().message;
  return path;
}

Result<MergeReport> merge(const std::string& base, const std::string& adapter, const std::string& out, float scale) {
  ThreadPool pool(2);
  MergeOptions o;
  o.scale = scale;
  return merge_adapter(base, adapter, out, o, pool);
}

const std::vector<std::string> kProjections = {"attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_up",
                                               "ffn_down"};

TEST(LoraMerge, F32BaseIsExactlyWPlusScaledBA) {
  const std::string base = write_small_base("F32", "m_f32.gguf");
  const std::string ad = synth_adapter(base, "m_f32_ad.gguf", 8, 16.0f, DType::F32);
  const std::string out = temp_path("m_f32_out.gguf");
  auto r = merge(base, ad, out, 0.75f);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->merged.size(), 14u);
  EXPECT_EQ(r->n_copied, 7u);  // embedding, output, output norm, 2 x 2 norms
  const float s = 0.75f * 16.0f / 8.0f;
  EXPECT_EQ(r->merged[0].scale, s);
  auto fb = gguf::File::open(base), fa = gguf::File::open(ad), fo = gguf::File::open(out);
  ASSERT_TRUE(fb.ok() && fa.ok() && fo.ok());
  for (int l = 0; l < 2; ++l) {
    for (const std::string& p : kProjections) {
      const std::string name = "blk." + std::to_string(l) + "." + p + ".weight";
      const gguf::TensorInfo& t = *fo->find_tensor(name);
      ASSERT_EQ(t.type, DType::F32);
      const std::vector<float> want = reference(*fb, *fa, name, s);
      ASSERT_EQ(std::memcmp(t.data, want.data(), want.size() * 4), 0) << name;
    }
  }
  EXPECT_EQ(*fo->get_string("kairo.lora.merged_adapter"), "synthetic LoRA rank 8 for synthetic llama");
  EXPECT_EQ(*fo->get_float("kairo.lora.merged_scale"), 0.75);
  EXPECT_EQ(*fo->get_uint("llama.block_count"), 2u);  // the base's metadata
  for (const auto& p : {base, ad, out}) std::remove(p.c_str());
}

TEST(LoraMerge, F16AndQ8_0BasesWithinTheReencodingRounding) {
  for (const std::string scheme : {"F16", "Q8_0"}) {
    const std::string base = write_small_base(scheme, "m_" + scheme + ".gguf");
    const std::string ad = synth_adapter(base, "m_" + scheme + "_ad.gguf", 4, 4.0f);
    const std::string out = temp_path("m_" + scheme + "_out.gguf");
    ASSERT_TRUE(merge(base, ad, out, 1.0f).ok());
    auto fb = gguf::File::open(base), fa = gguf::File::open(ad), fo = gguf::File::open(out);
    ASSERT_TRUE(fb.ok() && fa.ok() && fo.ok());
    const DType type = scheme == "F16" ? DType::F16 : DType::Q8_0;
    double max_change = 0;
    for (const std::string& p : kProjections) {
      const std::string name = "blk.1." + p + ".weight";
      const gguf::TensorInfo& t = *fo->find_tensor(name);
      ASSERT_EQ(t.type, type) << name;
      const std::vector<float> got = dequantized(t);
      const std::vector<float> want = reference(*fb, *fa, name, 1.0f);
      const std::vector<float> before = dequantized(*fb->find_tensor(name));
      for (size_t blk = 0; blk < want.size(); blk += 32) {
        float amax = 0;
        for (size_t i = blk; i < blk + 32; ++i) amax = std::max(amax, std::fabs(want[i]));
        for (size_t i = blk; i < blk + 32; ++i) {
          // F16: round to nearest, half an ulp = 2^-11 relative for normal values, 2^-25 absolute for subnormal
          // ones (below 2^-14 the spacing is 2^-24).
          // Q8_0: d = amax / 127 stored as f16 (relative error 2^-11), q = round(x / d): |x - q·d| <= d/2 plus
          // |q| <= 127 times d's rounding, i.e. amax/254 + amax·2^-11 (the 1e-7 covers the float division).
          const float tol = type == DType::F16 ? std::max(std::fabs(want[i]) * 0x1p-11f, 0x1p-25f)
                                               : amax / 254.0f + amax * 0x1p-11f + 1e-7f;
          ASSERT_LE(std::fabs(got[i] - want[i]), tol) << scheme << " " << name << "[" << i << "]";
          max_change = std::max(max_change, double(std::fabs(want[i] - before[i])));
        }
      }
    }
    EXPECT_GT(max_change, 1e-3) << scheme;  // the adapter did change the weights, beyond the rounding
    for (const auto& p : {base, ad, out}) std::remove(p.c_str());
  }
}

TEST(LoraMerge, ScaleZeroReproducesTheBaseBitForBit) {
  for (const std::string scheme : {"Q8_0", "Q4_K_M"}) {
    const std::string base = write_small_base(scheme, "z_" + scheme + ".gguf");
    const std::string ad = synth_adapter(base, "z_" + scheme + "_ad.gguf", 4, 8.0f);
    const std::string out = temp_path("z_" + scheme + "_out.gguf");
    auto r = merge(base, ad, out, 0.0f);
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_TRUE(r->merged.empty());
    auto fb = gguf::File::open(base), fo = gguf::File::open(out);
    ASSERT_TRUE(fb.ok() && fo.ok());
    ASSERT_EQ(fb->tensors().size(), fo->tensors().size());
    for (const gguf::TensorInfo& t : fb->tensors()) {
      const gguf::TensorInfo* m = fo->find_tensor(t.name);
      ASSERT_NE(m, nullptr);
      EXPECT_EQ(m->type, t.type);
      EXPECT_EQ(m->dims, t.dims);
      ASSERT_EQ(m->n_bytes, t.n_bytes);
      EXPECT_EQ(std::memcmp(m->data, t.data, t.n_bytes), 0) << scheme << " " << t.name;
    }
    for (const auto& p : {base, ad, out}) std::remove(p.c_str());
  }
}

TEST(LoraMerge, KQuantBasesKeepTheirType) {
  // Dim 256 and ffn 512: rows that split into K-quant super-blocks, so the pure Q4_K_M base is Q4_K throughout.
  const std::string base = temp_path("k.gguf");
  ThreadPool pool(2);
  ASSERT_TRUE(write_synth_model(testing::small_base_options("Q4_K_M", 256, 512), base, pool).ok());
  const std::string ad = synth_adapter(base, "k_ad.gguf", 4, 4.0f);
  const std::string out = temp_path("k_out.gguf");
  auto r = merge(base, ad, out, 1.0f);
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->merged.size(), 14u);
  for (const MergedTensor& t : r->merged) EXPECT_EQ(t.type, DType::Q4_K) << t.name;
  EXPECT_EQ(last_logits(out).size(), 600u);  // and the file loads and runs
  for (const auto& p : {base, ad, out}) std::remove(p.c_str());
}

TEST(LoraMerge, MergedModelRunsAndItsLogitsMove) {
  const std::string base = write_small_base("F16", "run.gguf");
  const std::string ad = synth_adapter(base, "run_ad.gguf", 8, 8.0f);
  const std::string merged = temp_path("run_merged.gguf"), zero = temp_path("run_zero.gguf");
  ASSERT_TRUE(merge(base, ad, merged, 1.0f).ok());
  ASSERT_TRUE(merge(base, ad, zero, 0.0f).ok());
  const std::vector<float> l_base = last_logits(base);
  const std::vector<float> l_merged = last_logits(merged);
  const std::vector<float> l_zero = last_logits(zero);
  ASSERT_EQ(l_base.size(), 600u);
  ASSERT_EQ(l_merged.size(), 600u);
  EXPECT_EQ(l_zero, l_base);  // bit for bit
  double diff = 0, norm = 0;
  for (size_t i = 0; i < l_base.size(); ++i) {
    ASSERT_TRUE(std::isfinite(l_merged[i]));
    diff = std::max(diff, double(std::fabs(l_merged[i] - l_base[i])));
    norm = std::max(norm, double(std::fabs(l_base[i])));
  }
  EXPECT_GT(diff, 1e-3 * norm);  // the adapter has an effect
  for (const auto& p : {base, ad, merged, zero}) std::remove(p.c_str());
}

TEST(LoraMerge, Errors) {
  const std::string base = write_small_base("F16", "e.gguf");
  const std::string ad = synth_adapter(base, "e_ad.gguf", 4, 4.0f);
  EXPECT_EQ(merge(base, ad, base, 1.0f).error().message,
            "the output \"" + base + "\" is one of the inputs; write to another file");
  EXPECT_EQ(merge(base, base, temp_path("e_out.gguf"), 1.0f).error().message,
            base + ": general.type is missing: this is not a LoRA adapter file (convert one with llama.cpp's "
                   "convert_lora_to_gguf.py, or make one with `kairo lora synth`)");

  // A base whose attn_q is IQ4_NL, a type kairo neither computes with nor encodes. (Its bytes are zeros: the merge
  // refuses on the type, before reading them.)
  auto fb = gguf::File::open(base);
  ASSERT_TRUE(fb.ok());
  gguf::Writer w;
  for (const auto& [k, v] : fb->metadata()) w.set(k, v);
  for (const gguf::TensorInfo& t : fb->tensors()) {
    if (t.name == "blk.0.attn_q.weight") {
      w.add_tensor(t.name, DType::IQ4_NL, t.dims, std::vector<uint8_t>(row_bytes(DType::IQ4_NL, 64) * 64));
    } else {
      w.add_tensor(t.name, t.type, t.dims, std::vector<uint8_t>(t.data, t.data + t.n_bytes));
    }
  }
  const std::string iq = temp_path("e_iq4.gguf");
  ASSERT_TRUE(w.write(iq).ok());
  EXPECT_EQ(merge(iq, ad, temp_path("e_out.gguf"), 1.0f).error().message,
            iq + ": tensor 'blk.0.attn_q.weight' is IQ4_NL, which kairo cannot re-encode after adding the adapter; "
                 "merge into a base of F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q4_K, Q5_K, Q6_K or MXFP4 "
                 "weights (an F16 base, then `kairo quantize`, gives any type)");
  std::remove(iq.c_str());
  for (const auto& p : {base, ad}) std::remove(p.c_str());
}

}  // namespace
}  // namespace kairo::convert
