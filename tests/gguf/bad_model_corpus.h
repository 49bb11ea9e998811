#pragma once
// The adversarial model-file corpus (tests/data/bad_models/*.gguf): how each file is made, and the exact error
// loading it must give. One table serves both the generator (tests/data/bad_models/make_bad_models.cpp writes the
// files) and bad_models_test.cpp (checks the checked-in files still equal what the table makes, then loads them).
// tests/gguf/corrupt_files_test.cpp covers more parse-level corruptions in memory; this corpus is about files on
// disk loaded the way `kairo serve` loads them, and the errors past the parser (config, weights, tokenizer, engine).
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "gguf/gguf_file.h"
#include "gguf/writer.h"
#include "raw_builder.h"
#include "tiny_model.h"

namespace kairo::gguf::testing {

struct BadModel {
  std::string file;      // name under tests/data/bad_models/
  std::string what;      // one line for the corpus index
  std::vector<uint8_t> bytes;
  std::string expected;  // the error; "{path}" stands for the file's path. Empty: the file loads.
};

inline std::vector<uint8_t> tiny_model_bytes(const TinyModelSpec& spec = {}) {
  return tiny_model_writer(spec).to_bytes();
}

inline std::vector<uint8_t> cut(std::vector<uint8_t> bytes, size_t n) {
  bytes.resize(n);
  return bytes;
}

inline std::vector<uint8_t> patch_u64(std::vector<uint8_t> bytes, size_t at, uint64_t v) {
  std::memcpy(bytes.data() + at, &v, sizeof(v));
  return bytes;
}

template <typename Edit>
std::vector<uint8_t> tiny_with(Edit edit, const TinyModelSpec& spec = {}) {
  Writer w = tiny_model_writer(spec);
  edit(w);
  return w.to_bytes();
}

inline std::vector<BadModel> bad_model_corpus() {
  constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
  const std::vector<uint8_t> tiny = tiny_model_bytes();
  // Where the data section starts, to cut inside the tensor infos and inside the data.
  const auto parsed = File::parse(tiny.data(), tiny.size(), "tiny");
  const size_t data_at = parsed.ok() ? parsed->data_offset() : 0;
  std::vector<BadModel> c;

  c.push_back({"ok_tiny_llama.gguf", "the valid tiny model every bad file below is made from", tiny, ""});

  // --- the file format
  c.push_back({"not_gguf.gguf", "a text file", {'h', 'e', 'l', 'l', 'o', '\n'},
               "{path}: offset 0: not a GGUF file (magic is \"hell\", expected \"GGUF\")"});
  c.push_back({"cut_at_0.gguf", "empty file", {}, "{path}: offset 0: file is empty, expected a GGUF model"});
  c.push_back({"cut_at_3.gguf", "cut inside the magic", cut(tiny, 3),
               "{path}: offset 0: file ends while reading the magic number (needs 4 bytes, 3 left); the file is "
               "truncated"});
  c.push_back({"cut_at_6.gguf", "cut inside the version", cut(tiny, 6),
               "{path}: offset 4: file ends while reading the version (needs 4 bytes, 2 left); the file is "
               "truncated"});
  c.push_back({"cut_at_12.gguf", "cut inside the tensor count", cut(tiny, 12),
               "{path}: offset 8: file ends while reading the tensor count (needs 8 bytes, 4 left); the file is "
               "truncated"});
  c.push_back({"cut_at_20.gguf", "cut inside the metadata count", cut(tiny, 20),
               "{path}: offset 16: file ends while reading the metadata count (needs 8 bytes, 4 left); the file is "
               "truncated"});
  c.push_back({"cut_at_30.gguf", "cut inside the first key: 11 tensors cannot fit in 30 bytes", cut(tiny, 30),
               "{path}: offset 8: tensor count 11 is impossible for a 30-byte file (limit 1048576)"});
  c.push_back({"cut_at_600.gguf", "cut inside the vocabulary array", cut(tiny, 600),
               "{path}: offset 600: file ends while reading a metadata value type (needs 4 bytes, 0 left); the file "
               "is truncated"});
  c.push_back({"cut_in_tensor_infos.gguf", "cut inside the tensor infos", cut(tiny, data_at - 40),
               "{path}: offset 1437: tensor name length 21 is beyond the end of the file (19 bytes left)"});
  c.push_back({"cut_in_data.gguf", "data section truncated: the last tensor is 100 bytes short",
               cut(tiny, tiny.size() - 100),
               "{path}: offset 3904: tensor 'blk.0.ffn_down.weight': data [2400, +512) extends past the end of the "
               "file (data section is 2812 bytes); the file is truncated or the tensor info is corrupt"});
  c.push_back({"n_tensors_max.gguf", "tensor count 2^64-1", patch_u64(tiny, 8, kMax),
               "{path}: offset 8: tensor count 18446744073709551615 is impossible for a 4416-byte file (limit 1048576)"});
  c.push_back({"n_kv_max.gguf", "metadata count 2^64-1", patch_u64(tiny, 16, kMax),
               "{path}: offset 16: metadata count 18446744073709551615 is impossible for a 4416-byte file (limit "
               "1048576)"});
  c.push_back({"string_beyond_file.gguf", "the first key's length (60000) runs past the end of the file",
               patch_u64(tiny, 24, 60000),
               "{path}: offset 24: metadata key length 60000 is beyond the end of the file (4384 bytes left)"});
  c.push_back({"string_length_max.gguf", "the first key's length is 2^64-1", patch_u64(tiny, 24, kMax),
               "{path}: offset 24: metadata key length 18446744073709551615 exceeds the limit of 65536 bytes"});
  for (uint32_t alignment : {0u, 3u}) {
    RawBuilder b;  // raw: the Writer always writes the alignment it pads with
    b.header(1, 2).kv_str("general.architecture", "llama").kv_u32("general.alignment", alignment);
    b.tensor("token_embd.weight", {8, 8}, 0, 0).pad().zeros(256);
    c.push_back({"alignment_" + std::to_string(alignment) + ".gguf",
                 "general.alignment = " + std::to_string(alignment), b.bytes,
                 "{path}: offset 16: general.alignment must be a uint32 power of two, got " + std::to_string(alignment)});
  }
  for (uint32_t n_dims : {5u, 0xFFFFFFFFu}) {
    RawBuilder b;
    b.header(1, 0).str("t").put<uint32_t>(n_dims).zeros(64);
    c.push_back({"n_dims_" + std::to_string(n_dims) + ".gguf", "a tensor with " + std::to_string(n_dims) +
                 " dimensions", b.bytes,
                 "{path}: offset 33: tensor 't': " + std::to_string(n_dims) + " dimensions, expected 1 to 4"});
  }
  {
    RawBuilder b;
    b.header(1, 0).tensor("t", {1ull << 32, 1ull << 32}, 0, 0).pad().zeros(64);
    c.push_back({"element_count_overflow.gguf", "dims 2^32 x 2^32", b.bytes,
                 "{path}: offset 45: tensor 't': element count overflows 64 bits"});
  }
  {
    RawBuilder b;
    b.header(1, 0).tensor("t", {32}, 99, 0).pad().zeros(128);
    c.push_back({"tensor_type_99.gguf", "tensor type 99", b.bytes,
                 "{path}: offset 45: tensor 't': type 99 is not a known GGML tensor type"});
  }
  {
    RawBuilder b;
    b.header(1, 0).tensor("t", {4}, 0, 7).pad().zeros(64);
    c.push_back({"misaligned_data.gguf", "tensor data offset 7 with alignment 32", b.bytes,
                 "{path}: offset 49: tensor 't': data offset 7 is not a multiple of the alignment 32"});
  }
  {
    RawBuilder b;
    b.header(0, 2).kv_u32("general.alignment", 32).kv_u32("general.alignment", 64);
    c.push_back({"duplicate_key.gguf", "general.alignment twice", b.bytes,
                 "{path}: offset 57: duplicate metadata key 'general.alignment'"});
  }
  c.push_back({"duplicate_tensor.gguf", "blk.0.attn_norm.weight twice", tiny_with([](Writer& w) {
                 w.add_tensor("blk.0.attn_norm.weight", DType::F32, {8}, tiny_f32_bytes(8, 0.1f));
               }),
               "{path}: offset 1498: duplicate tensor 'blk.0.attn_norm.weight'"});

  // --- the model
  TinyModelSpec missing;
  missing.omit_tensor = "blk.0.ffn_up.weight";
  c.push_back({"missing_tensor.gguf", "blk.0.ffn_up.weight absent", tiny_model_bytes(missing),
               "{path}: tensor 'blk.0.ffn_up.weight' is missing"});
  TinyModelSpec transposed;
  transposed.transpose_tensor = "blk.0.ffn_gate.weight";
  c.push_back({"wrong_shape.gguf", "blk.0.ffn_gate.weight stored transposed", tiny_model_bytes(transposed),
               "{path}: tensor 'blk.0.ffn_gate.weight' has shape [16, 8], expected [8, 16]"});
  c.push_back({"block_count_string.gguf", "llama.block_count is the string \"1\"",
               tiny_with([](Writer& w) { w.set("llama.block_count", Value::string("1")); }),
               "{path}: metadata key 'llama.block_count' should be a non-negative integer, but is string \"1\""});
  TinyModelSpec mamba;
  mamba.arch = "mamba";
  c.push_back({"unsupported_arch.gguf", "general.architecture = mamba", tiny_model_bytes(mamba),
               "{path}: architecture 'mamba' is not supported (supported: llama, qwen2, qwen3, qwen3moe, phi3, gemma2, gemma3, gpt-oss)"});

  // --- the tokenizer
  c.push_back({"bos_outside_vocab.gguf", "tokenizer.ggml.bos_token_id = 99999 in an 8-token vocabulary",
               tiny_with([](Writer& w) { w.set("tokenizer.ggml.bos_token_id", Value::u32(99999)); }),
               "{path}: metadata key 'tokenizer.ggml.bos_token_id' = 99999 is outside the vocabulary (8 tokens); fix "
               "the id or remove the key"});
  for (const char* text : {"<0x-1>", "<0xZZ>"}) {
    const std::string name = std::string("byte_token_") + (text[3] == '-' ? "minus_1" : "zz") + ".gguf";
    c.push_back({name, std::string("SPM byte token with text ") + text, tiny_with([&](Writer& w) {
                   w.set("tokenizer.ggml.tokens", Value::string_array({"<unk>", "<s>", "</s>", "\xE2\x96\x81", "a",
                                                                       text, "\xE2\x96\x81" "a", "ab"}));
                   w.set("tokenizer.ggml.token_type", Value::i32_array({2, 3, 3, 1, 1, 6, 1, 1}));
                 }),
                 std::string("{path}: token 5 has type BYTE but its text \"") + text +
                     "\" is not of the form <0xNN>; the vocabulary is corrupt"});
  }
  c.push_back({"scores_shorter_than_vocab.gguf", "7 scores for 8 tokens", tiny_with([](Writer& w) {
                 w.set("tokenizer.ggml.scores", Value::f32_array({0, 0, 0, -1, -2, -3, -0.5f}));
               }),
               "{path}: metadata key 'tokenizer.ggml.scores' has 7 items but the vocabulary has 8 tokens"});
  TinyModelSpec small_embd;
  small_embd.n_vocab = 6;
  c.push_back({"vocab_larger_than_embedding.gguf", "8 tokens but token_embd has 6 rows", tiny_model_bytes(small_embd),
               "the tokenizer has 8 tokens but the model's embedding only 6"});
  return c;
}

}  // namespace kairo::gguf::testing
