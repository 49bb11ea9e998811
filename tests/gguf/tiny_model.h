#pragma once
// The smallest complete model kairo loads: llama architecture, 1 layer, dim 8, 2 heads, ffn 16, F32 weights, and an
// 8-token SentencePiece vocabulary (with an unknown token instead of byte fallback). About 4 KB, so adversarial
// variants of it can be checked in, and fuzz seeds start from a file that gets all the way through loading.
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "gguf/writer.h"

namespace kairo::gguf::testing {

struct TinyModelSpec {
  std::string arch = "llama";
  int n_vocab = 8;  // rows of token_embd (the tokenizer always has 8 tokens)
  bool tied_output = true;
  std::string omit_tensor;       // leave this tensor out
  std::string transpose_tensor;  // write this matrix with its two dims swapped
};

inline std::vector<uint8_t> tiny_f32_bytes(int64_t n, float scale) {
  std::vector<uint8_t> bytes(static_cast<size_t>(n) * 4);
  for (int64_t i = 0; i < n; ++i) {
    const float v = scale * static_cast<float>((i * 37 + 11) % 17 - 8);  // deterministic, small, not all zero
    std::memcpy(bytes.data() + i * 4, &v, 4);
  }
  return bytes;
}

inline void add_tiny_tokenizer(Writer& w) {
  w.set("tokenizer.ggml.model", Value::string("llama"));
  w.set("tokenizer.ggml.tokens",
        Value::string_array({"<unk>", "<s>", "</s>", "\xE2\x96\x81", "a", "b", "\xE2\x96\x81" "a", "ab"}));
  w.set("tokenizer.ggml.scores", Value::f32_array({0, 0, 0, -1, -2, -3, -0.5f, -1.5f}));
  w.set("tokenizer.ggml.token_type", Value::i32_array({2, 3, 3, 1, 1, 1, 1, 1}));
  w.set("tokenizer.ggml.bos_token_id", Value::u32(1));
  w.set("tokenizer.ggml.eos_token_id", Value::u32(2));
  w.set("tokenizer.ggml.unknown_token_id", Value::u32(0));
}

// Metadata and tensors of the tiny model; callers change or drop pieces to make a bad one.
inline Writer tiny_model_writer(const TinyModelSpec& spec = {}) {
  constexpr int kDim = 8, kFfn = 16;
  Writer w;
  const std::string& a = spec.arch;
  w.set("general.architecture", Value::string(a));
  w.set("general.name", Value::string("tiny"));
  w.set(a + ".block_count", Value::u32(1));
  w.set(a + ".embedding_length", Value::u32(kDim));
  w.set(a + ".attention.head_count", Value::u32(2));
  w.set(a + ".attention.head_count_kv", Value::u32(2));
  w.set(a + ".feed_forward_length", Value::u32(kFfn));
  w.set(a + ".context_length", Value::u32(32));
  w.set(a + ".attention.layer_norm_rms_epsilon", Value::f32(1e-5f));
  add_tiny_tokenizer(w);
  auto mat = [&](const std::string& name, int64_t cols, int64_t rows) {
    if (name == spec.omit_tensor) return;
    if (name == spec.transpose_tensor) std::swap(cols, rows);
    w.add_tensor(name, DType::F32, {cols, rows}, tiny_f32_bytes(cols * rows, 0.05f));
  };
  auto vec = [&](const std::string& name, int64_t n) {
    if (name == spec.omit_tensor) return;
    w.add_tensor(name, DType::F32, {n}, tiny_f32_bytes(n, 0.1f));
  };
  mat("token_embd.weight", kDim, spec.n_vocab);
  vec("output_norm.weight", kDim);
  if (!spec.tied_output) mat("output.weight", kDim, spec.n_vocab);
  vec("blk.0.attn_norm.weight", kDim);
  mat("blk.0.attn_q.weight", kDim, kDim);
  mat("blk.0.attn_k.weight", kDim, kDim);
  mat("blk.0.attn_v.weight", kDim, kDim);
  mat("blk.0.attn_output.weight", kDim, kDim);
  vec("blk.0.ffn_norm.weight", kDim);
  mat("blk.0.ffn_gate.weight", kDim, kFfn);
  mat("blk.0.ffn_up.weight", kDim, kFfn);
  mat("blk.0.ffn_down.weight", kFfn, kDim);
  return w;
}

}  // namespace kairo::gguf::testing
