// The LoRA adapter loader: llama.cpp's format read back exactly, and every malformed adapter refused with a message
// that names the file, the tensor and what to change.
#include "model/lora/adapter.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "core/half.h"
#include "gguf/writer.h"
#include "tensor/quantize.h"

namespace kairo::model::lora {
namespace {

// A one-layer llama of dim 64 (two heads of 32), ffn 96: rows of 64 and 96 split into Q8_0 blocks.
ModelConfig small_config() {
  ModelConfig c;
  c.arch = "llama";
  c.n_layers = 1;
  c.dim = 64;
  c.n_heads = 2;
  c.n_kv_heads = 2;
  c.head_dim = 32;
  c.ffn_dim = 96;
  c.n_vocab = 16;
  c.context_length = 64;
  return c;
}

std::vector<uint8_t> f32_bytes(const std::vector<float>& v) {
  std::vector<uint8_t> out(v.size() * 4);
  if (!v.empty()) std::memcpy(out.data(), v.data(), out.size());  // memcpy from an empty vector's null data is UB
  return out;
}

// Every tensor of the config's table, F32, all zeros: the loader reads only names and dims of the base.
std::vector<uint8_t> base_bytes(const ModelConfig& c) {
  gguf::Writer w;
  w.set("general.architecture", gguf::Value::string(c.arch));
  for (const TensorEntry& e : model_tensors(c)) {
    int64_t n = 1;
    for (int64_t d : e.dims) n *= d;
    w.add_tensor(e.name, DType::F32, e.dims, std::vector<uint8_t>(static_cast<size_t>(n) * 4));
  }
  return w.to_bytes();
}

// Values that differ per element and are exact in every adapter type's rounding (multiples of 1/64, small).
std::vector<float> pattern(int64_t n, int salt) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[i] = static_cast<float>((i * 7 + salt * 13) % 31 - 15) / 64.0f;
  return v;
}

std::vector<uint8_t> encode(DType type, const std::vector<float>& v, int64_t n_cols) {
  const int64_t n_rows = static_cast<int64_t>(v.size()) / n_cols;
  std::vector<uint8_t> out(row_bytes(type, n_cols) * n_rows);
  for (int64_t r = 0; r < n_rows; ++r) quantize_row(type, v.data() + r * n_cols, out.data() + r * row_bytes(type, n_cols), n_cols);
  return out;
}

struct AdapterFile {
  gguf::Writer w;
  AdapterFile(const std::string& arch = "llama", float alpha = 8.0f) {
    w.set("general.architecture", gguf::Value::string(arch));
    w.set("general.type", gguf::Value::string("adapter"));
    w.set("general.name", gguf::Value::string("test adapter"));
    w.set("adapter.type", gguf::Value::string("lora"));
    w.set("adapter.lora.alpha", gguf::Value::f32(alpha));
  }
  // A pair for `base` of dims [n_in, n_out] at `rank`, values pattern(·, salt).
  void pair(const std::string& base, int64_t n_in, int64_t n_out, int64_t rank, DType type = DType::F32,
            int salt = 1) {
    w.add_tensor(base + ".lora_a", type, {n_in, rank}, encode(type, pattern(n_in * rank, salt), n_in));
    w.add_tensor(base + ".lora_b", type, {rank, n_out}, encode(type, pattern(rank * n_out, salt + 1), rank));
  }
  void raw(const std::string& name, std::vector<int64_t> dims, const std::vector<float>& v) {
    w.add_tensor(name, DType::F32, std::move(dims), f32_bytes(v));
  }
};

class LoraAdapterTest : public ::testing::Test {
 protected:
  void SetUp() override { use_base(small_config()); }
  void use_base(const ModelConfig& c) {
    config_ = c;
    base_bytes_ = base_bytes(c);
    base_ = std::make_unique<gguf::File>(*gguf::File::parse(base_bytes_.data(), base_bytes_.size(), "base.gguf"));
  }
  Result<Adapter> read(const AdapterFile& a, const LoadOptions& o = {}) {
    adapter_bytes_ = a.w.to_bytes();
    auto f = gguf::File::parse(adapter_bytes_.data(), adapter_bytes_.size(), "adapter.gguf");
    EXPECT_TRUE(f.ok()) << f.error().message;
    if (!f.ok()) return f.error();
    return read_adapter(*f, *base_, config_, o);
  }
  std::string error_of(const AdapterFile& a, const LoadOptions& o = {}) {
    auto r = read(a, o);
    return r.ok() ? "(loaded)" : r.error().message;
  }

  ModelConfig config_;
  std::vector<uint8_t> base_bytes_, adapter_bytes_;
  std::unique_ptr<gguf::File> base_;
};

TEST_F(LoraAdapterTest, ReadsPairsInBaseOrderWithRankAndScale) {
  AdapterFile a("llama", 8.0f);
  a.pair("blk.0.ffn_down.weight", 96, 64, 4, DType::F32, 3);  // written before attn_q: the loader sorts by the base
  a.pair("blk.0.attn_q.weight", 64, 64, 2, DType::F16, 5);
  LoadOptions o;
  o.scale = 0.5f;
  auto r = read(a, o);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->name, "test adapter");
  EXPECT_EQ(r->arch, "llama");
  EXPECT_EQ(r->alpha, 8.0f);
  EXPECT_EQ(r->user_scale, 0.5f);
  ASSERT_EQ(r->weights.size(), 2u);
  const LoraWeight& q = r->weights[0];
  EXPECT_EQ(q.base_name, "blk.0.attn_q.weight");
  EXPECT_EQ(q.slot, TensorSlot::Q);
  EXPECT_EQ(q.layer, 0);
  EXPECT_EQ(q.n_in, 64);
  EXPECT_EQ(q.n_out, 64);
  EXPECT_EQ(q.rank, 2);
  EXPECT_EQ(q.a_type, DType::F16);
  EXPECT_EQ(q.scale, 0.5f * 8.0f / 2.0f);  // user scale · alpha / rank, per pair
  EXPECT_EQ(q.a, pattern(64 * 2, 5));       // the pattern is exact in F16
  EXPECT_EQ(q.b, pattern(2 * 64, 6));
  const LoraWeight& down = r->weights[1];
  EXPECT_EQ(down.base_name, "blk.0.ffn_down.weight");
  EXPECT_EQ(down.slot, TensorSlot::Down);
  EXPECT_EQ(down.n_in, 96);
  EXPECT_EQ(down.n_out, 64);
  EXPECT_EQ(down.rank, 4);
  EXPECT_EQ(down.scale, 0.5f * 8.0f / 4.0f);
  EXPECT_EQ(down.a.size(), 4u * 96);   // [rank, n_in]
  EXPECT_EQ(down.b.size(), 64u * 4);   // [n_out, rank]
  EXPECT_EQ(r->max_rank(), 4);
  EXPECT_EQ(r->n_params(), 2u * 64 * 2 + 96u * 4 + 64u * 4);
  EXPECT_EQ(r->find("blk.0.ffn_down.weight"), &r->weights[1]);
  EXPECT_EQ(r->find("blk.0.attn_k.weight"), nullptr);
}

TEST_F(LoraAdapterTest, WithoutAlphaTheScaleIsTheUserScale) {
  AdapterFile a("llama", 0.0f);
  a.pair("blk.0.attn_v.weight", 64, 64, 4);
  LoadOptions o;
  o.scale = 0.75f;
  auto r = read(a, o);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->weights[0].scale, 0.75f);
  EXPECT_EQ(effective_scale(0.0f, 16, 2.0f), 2.0f);
  EXPECT_EQ(effective_scale(32.0f, 16, 0.5f), 1.0f);
}

TEST_F(LoraAdapterTest, EveryAdapterTypeLoadsAsItsDequantizedValues) {
  for (DType type : {DType::F32, DType::F16, DType::BF16, DType::Q8_0}) {
    AdapterFile a;
    a.pair("blk.0.ffn_up.weight", 64, 96, 32, type);  // rank 32: lora_b's rows split into Q8_0 blocks
    auto r = read(a);
    ASSERT_TRUE(r.ok()) << dtype_name(type) << ": " << r.error().message;
    const LoraWeight& w = r->weights[0];
    EXPECT_EQ(w.a_type, type);
    EXPECT_EQ(w.b_type, type);
    EXPECT_EQ(w.slot, TensorSlot::Up);
    // Q8_0 of this pattern: the largest |value| of each block is 15/64 = 127 steps, so every value is a whole
    // number of steps (15/64/127 · k) only approximately; F32/F16/BF16 hold it exactly.
    const std::vector<float> want = pattern(64 * 32, 1);
    for (size_t i = 0; i < want.size(); ++i) {
      const float tol = type == DType::Q8_0 ? 0.5f * (15.0f / 64.0f) / 127.0f + 1e-4f : 0.0f;
      ASSERT_NEAR(w.a[i], want[i], tol) << dtype_name(type) << " a[" << i << "]";
    }
  }
}

TEST_F(LoraAdapterTest, FusedProjectionsAreAdaptedWhole) {
  ModelConfig c = small_config();
  c.arch = "phi3";
  c.fused_qkv = true;
  c.fused_gate_up = true;
  use_base(c);
  AdapterFile a("phi3");
  a.pair("blk.0.attn_qkv.weight", 64, 192, 8);
  a.pair("blk.0.ffn_up.weight", 64, 192, 8);
  auto r = read(a);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->weights[0].slot, TensorSlot::Qkv);
  EXPECT_EQ(r->weights[0].n_out, 192);
  EXPECT_EQ(r->weights[1].slot, TensorSlot::GateUp);
}

TEST_F(LoraAdapterTest, NormVectorsAreIgnoredAsInLlamaCpp) {
  AdapterFile a;
  a.pair("blk.0.attn_k.weight", 64, 64, 4);
  a.raw("blk.0.attn_norm.weight", {64}, std::vector<float>(64, 1.0f));
  auto r = read(a);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->weights.size(), 1u);
  EXPECT_EQ(r->ignored, std::vector<std::string>{"blk.0.attn_norm.weight"});
}

TEST_F(LoraAdapterTest, MetadataErrors) {
  AdapterFile model_file;
  model_file.w.set("general.type", gguf::Value::string("model"));
  model_file.pair("blk.0.attn_q.weight", 64, 64, 4);
  EXPECT_EQ(error_of(model_file),
            "adapter.gguf: general.type is \"model\", not \"adapter\": this is not a LoRA adapter file (convert one "
            "with llama.cpp's convert_lora_to_gguf.py, or make one with `kairo lora synth`)");

  gguf::Writer bare;
  bare.set("general.architecture", gguf::Value::string("llama"));
  AdapterFile no_type;
  no_type.w = bare;
  EXPECT_EQ(error_of(no_type),
            "adapter.gguf: general.type is missing: this is not a LoRA adapter file (convert one with llama.cpp's "
            "convert_lora_to_gguf.py, or make one with `kairo lora synth`)");

  AdapterFile cvec;
  cvec.w.set("adapter.type", gguf::Value::string("control_vector"));
  EXPECT_EQ(error_of(cvec),
            "adapter.gguf: adapter.type is \"control_vector\"; kairo reads LoRA adapters only (adapter.type = "
            "\"lora\")");

  AdapterFile other_arch("qwen2");
  other_arch.pair("blk.0.attn_q.weight", 64, 64, 4);
  EXPECT_EQ(error_of(other_arch),
            "adapter.gguf: the adapter is for \"qwen2\" models but the base model base.gguf is llama; use an adapter "
            "made for this base model");

  AdapterFile no_arch;
  no_arch.w.set("general.architecture", gguf::Value::string(""));
  EXPECT_EQ(error_of(no_arch),
            "adapter.gguf: the adapter is for (general.architecture missing) models but the base model base.gguf is "
            "llama; use an adapter made for this base model");

  AdapterFile bad_alpha;
  bad_alpha.w.set("adapter.lora.alpha", gguf::Value::f32(std::numeric_limits<float>::infinity()));
  bad_alpha.pair("blk.0.attn_q.weight", 64, 64, 4);
  EXPECT_EQ(error_of(bad_alpha), "adapter.gguf: adapter.lora.alpha is inf; it must be a finite number");

  AdapterFile string_alpha;
  string_alpha.w.set("adapter.lora.alpha", gguf::Value::string("16"));
  EXPECT_EQ(error_of(string_alpha), "adapter.gguf: metadata key 'adapter.lora.alpha' should be a number, but is string "
                                    "\"16\"");

  AdapterFile empty;
  EXPECT_EQ(error_of(empty), "adapter.gguf: the adapter has no lora_a / lora_b tensors");
}

TEST_F(LoraAdapterTest, NameAndPairingErrors) {
  AdapterFile stray;
  stray.raw("blk.0.attn_q.weight.delta", {64, 4}, pattern(256, 1));
  EXPECT_EQ(error_of(stray),
            "adapter.gguf: tensor 'blk.0.attn_q.weight.delta' is neither a .lora_a nor a .lora_b tensor; a LoRA "
            "adapter holds <base tensor>.lora_a / <base tensor>.lora_b pairs only");

  AdapterFile only_a;
  only_a.raw("blk.0.attn_q.weight.lora_a", {64, 4}, pattern(256, 1));
  EXPECT_EQ(error_of(only_a),
            "adapter.gguf: tensor 'blk.0.attn_q.weight.lora_a' has no partner 'blk.0.attn_q.weight.lora_b'; every "
            "adapted tensor needs both lora_a and lora_b");

  AdapterFile only_b;
  only_b.raw("blk.0.attn_q.weight.lora_b", {4, 64}, pattern(256, 1));
  EXPECT_EQ(error_of(only_b),
            "adapter.gguf: tensor 'blk.0.attn_q.weight.lora_b' has no partner 'blk.0.attn_q.weight.lora_a'; every "
            "adapted tensor needs both lora_a and lora_b");

  AdapterFile unknown;
  unknown.pair("blk.3.attn_q.weight", 64, 64, 4);  // the base has one layer
  EXPECT_EQ(error_of(unknown),
            "adapter.gguf: tensor 'blk.3.attn_q.weight.lora_a' adapts 'blk.3.attn_q.weight', which the base model "
            "base.gguf does not have (is this adapter for another model?)");

  for (const char* name : {"token_embd.weight", "output.weight", "blk.0.attn_norm.weight"}) {
    AdapterFile not_projection;
    not_projection.pair(name, 64, 16, 4);
    EXPECT_EQ(error_of(not_projection),
              "adapter.gguf: tensor '" + std::string(name) + "' cannot be adapted: kairo applies LoRA to the "
              "attention and dense feed-forward projections (attn_q, attn_k, attn_v, attn_qkv, attn_output, "
              "ffn_gate, ffn_up, ffn_down) only");
  }
}

TEST_F(LoraAdapterTest, ExpertTensorsAreRefused) {
  ModelConfig c = small_config();
  c.n_experts = 4;
  c.n_experts_used = 2;
  c.expert_ffn_dim = 32;
  use_base(c);
  AdapterFile a;
  a.pair("blk.0.ffn_up_exps.weight", 64, 32, 4);
  EXPECT_EQ(error_of(a),
            "adapter.gguf: tensor 'blk.0.ffn_up_exps.weight' cannot be adapted: mixture-of-experts expert tensors are "
            "not supported yet; kairo applies LoRA to the attention and dense feed-forward projections (attn_q, "
            "attn_k, attn_v, attn_qkv, attn_output, ffn_gate, ffn_up, ffn_down) only");
}

TEST_F(LoraAdapterTest, ShapeAndRankErrors) {
  AdapterFile wrong_in;
  wrong_in.raw("blk.0.ffn_down.weight.lora_a", {64, 4}, pattern(256, 1));  // ffn_down takes 96 inputs
  wrong_in.raw("blk.0.ffn_down.weight.lora_b", {4, 64}, pattern(256, 2));
  EXPECT_EQ(error_of(wrong_in),
            "adapter.gguf: tensor 'blk.0.ffn_down.weight.lora_a' has dims [64, 4] but its base tensor "
            "'blk.0.ffn_down.weight' is [96, 64]: lora_a must be [96, rank]");

  AdapterFile transposed;
  transposed.raw("blk.0.ffn_down.weight.lora_a", {4, 96}, pattern(384, 1));
  transposed.raw("blk.0.ffn_down.weight.lora_b", {4, 64}, pattern(256, 2));
  EXPECT_EQ(error_of(transposed),
            "adapter.gguf: tensor 'blk.0.ffn_down.weight.lora_a' has dims [4, 96] but its base tensor "
            "'blk.0.ffn_down.weight' is [96, 64]: lora_a must be [96, rank] (it is stored transposed, as llama.cpp's "
            "old finetune example wrote it: re-convert the adapter with convert_lora_to_gguf.py)");

  AdapterFile wrong_out;
  wrong_out.raw("blk.0.ffn_gate.weight.lora_a", {64, 4}, pattern(256, 1));
  wrong_out.raw("blk.0.ffn_gate.weight.lora_b", {4, 64}, pattern(256, 2));  // ffn_gate has 96 outputs
  EXPECT_EQ(error_of(wrong_out),
            "adapter.gguf: tensor 'blk.0.ffn_gate.weight.lora_b' has dims [4, 64] but its base tensor "
            "'blk.0.ffn_gate.weight' is [64, 96]: lora_b must be [rank, 96] (is this adapter for another model?)");

  AdapterFile ranks_differ;
  ranks_differ.raw("blk.0.attn_q.weight.lora_a", {64, 4}, pattern(256, 1));
  ranks_differ.raw("blk.0.attn_q.weight.lora_b", {8, 64}, pattern(512, 2));
  EXPECT_EQ(error_of(ranks_differ),
            "adapter.gguf: the ranks of 'blk.0.attn_q.weight.lora_a' (4, dims [64, 4]) and "
            "'blk.0.attn_q.weight.lora_b' (8, dims [8, 64]) differ; lora_a's dims[1] and lora_b's dims[0] are the "
            "same rank");

  // Rank 0: the GGUF reader already refuses a zero dimension (the loader's own check is the second line of defence).
  AdapterFile rank0;
  rank0.raw("blk.0.attn_q.weight.lora_a", {64, 0}, {});
  rank0.raw("blk.0.attn_q.weight.lora_b", {0, 64}, {});
  const std::vector<uint8_t> rank0_bytes = rank0.w.to_bytes();
  auto rank0_file = gguf::File::parse(rank0_bytes.data(), rank0_bytes.size(), "adapter.gguf");
  ASSERT_FALSE(rank0_file.ok());
  EXPECT_EQ(rank0_file.error().message,
            "adapter.gguf: offset 268: tensor 'blk.0.attn_q.weight.lora_a': dimension 1 is 0, expected 1 to 2^63-1");

  AdapterFile rank16;
  rank16.pair("blk.0.attn_q.weight", 64, 64, 16);
  LoadOptions cap;
  cap.max_rank = 8;
  EXPECT_EQ(error_of(rank16, cap),
            "adapter.gguf: 'blk.0.attn_q.weight' has rank 16; the rank must be 1 to 8 (raise the limit with "
            "--max-lora-rank, or merge a full-rank delta into the model with `kairo lora merge`)");
  EXPECT_TRUE(read(rank16).ok());  // within the default cap
}

TEST_F(LoraAdapterTest, TypeAndValueErrors) {
  AdapterFile q4;
  q4.pair("blk.0.attn_q.weight", 64, 64, 32, DType::Q4_0);
  EXPECT_EQ(error_of(q4),
            "adapter.gguf: tensor 'blk.0.attn_q.weight.lora_a' is Q4_0; adapter tensors must be F32, F16, BF16 or "
            "Q8_0 (convert the adapter with --outtype f16)");

  AdapterFile three_d;
  three_d.raw("blk.0.attn_q.weight.lora_a", {64, 4, 1}, pattern(256, 1));
  three_d.raw("blk.0.attn_q.weight.lora_b", {4, 64}, pattern(256, 2));
  EXPECT_EQ(error_of(three_d),
            "adapter.gguf: tensor 'blk.0.attn_q.weight.lora_a' has dims [64, 4, 1]; LoRA tensors are matrices (2 "
            "dims)");

  AdapterFile nan;
  std::vector<float> b = pattern(256, 2);
  b[70] = std::nanf("");
  nan.raw("blk.0.attn_q.weight.lora_a", {64, 4}, pattern(256, 1));
  nan.raw("blk.0.attn_q.weight.lora_b", {4, 64}, b);
  EXPECT_EQ(error_of(nan),
            "adapter.gguf: tensor 'blk.0.attn_q.weight.lora_b' holds a non-finite value (nan) at row 17, column 2");
}

}  // namespace
}  // namespace kairo::model::lora
