// Regenerates the GGUF seed corpus (tests/fuzz/corpus/gguf, shared by fuzz_gguf and fuzz_gguf_mmap): small valid
// files that reach every stage a stranger's file goes through (metadata of every type, tensors of several types,
// model config, both tokenizer types) plus the head of the real aidreams model. Not run by CI; the output is
// checked in.   Usage: kairo_fuzz_make_seeds <source dir>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "gguf/tiny_model.h"
#include "gguf/writer.h"

namespace {

using kairo::gguf::Value;
using kairo::gguf::ValueType;
using kairo::gguf::Writer;

bool write_bytes(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  std::printf("%s (%zu bytes)\n", path.c_str(), bytes.size());
  return static_cast<bool>(out);
}

// A byte-level BPE tokenizer: the 256 GPT-2 byte characters, a few merges, one control token.
Writer bpe_tokenizer() {
  std::vector<std::string> tokens;
  int extra = 256;
  for (int b = 0; b < 256; ++b) {
    const bool printable = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
    const int cpt = printable ? b : extra++;
    std::string s;
    if (cpt < 0x80) {
      s.push_back(static_cast<char>(cpt));
    } else {
      s.push_back(static_cast<char>(0xC0 | (cpt >> 6)));
      s.push_back(static_cast<char>(0x80 | (cpt & 0x3F)));
    }
    tokens.push_back(s);
  }
  tokens.insert(tokens.end(), {"ab", "\xC4\xA0" "a", "<|endoftext|>"});
  std::vector<int32_t> types(tokens.size(), 1);
  types.back() = 3;
  Writer w;
  w.set("general.architecture", Value::string("gpt2"));
  w.set("tokenizer.ggml.model", Value::string("gpt2"));
  w.set("tokenizer.ggml.pre", Value::string("llama3"));
  w.set("tokenizer.ggml.tokens", Value::string_array(tokens));
  w.set("tokenizer.ggml.token_type", Value::i32_array(types));
  w.set("tokenizer.ggml.merges", Value::string_array({"a b", "\xC4\xA0 a"}));
  w.set("tokenizer.ggml.bos_token_id", Value::u32(258));
  w.set("tokenizer.ggml.eos_token_id", Value::u32(258));
  return w;
}

// Every metadata value type, a nested array, a non-default alignment and tensors of plain and block types.
Writer all_types() {
  Writer w(64);  // writes general.alignment = 64
  w.set("u8", Value::uint(ValueType::UINT8, 200));
  w.set("i8", Value::sint(ValueType::INT8, -100));
  w.set("u16", Value::uint(ValueType::UINT16, 60000));
  w.set("i16", Value::sint(ValueType::INT16, -30000));
  w.set("u32", Value::u32(4000000000u));
  w.set("i32", Value::i32(-2000000000));
  w.set("u64", Value::uint(ValueType::UINT64, 1ull << 60));
  w.set("i64", Value::sint(ValueType::INT64, -(1ll << 60)));
  w.set("f32", Value::f32(1.5f));
  w.set("f64", Value::real(ValueType::FLOAT64, -2.25));
  w.set("bool", Value::boolean(true));
  w.set("str", Value::string("h\xC3\xA9llo"));
  w.set("arr.f32", Value::f32_array({1, 2, 3}));
  w.set("arr.str", Value::string_array({"x", "", "yz"}));
  w.set("arr.nested", Value::array(ValueType::ARRAY, {Value::i32_array({1, 2}), Value::i32_array({3})}));
  w.add_tensor("f16", kairo::DType::F16, {4, 2}, std::vector<uint8_t>(16, 0x3c));
  w.add_tensor("bf16", kairo::DType::BF16, {4}, std::vector<uint8_t>(8, 0x3f));
  w.add_tensor("q8_0", kairo::DType::Q8_0, {32}, std::vector<uint8_t>(34, 1));
  w.add_tensor("q4_0", kairo::DType::Q4_0, {32, 2}, std::vector<uint8_t>(36, 2));
  w.add_tensor("q4_k", kairo::DType::Q4_K, {256}, std::vector<uint8_t>(144, 3));
  return w;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <kairo source dir>\n", argv[0]);
    return 2;
  }
  const std::string src = argv[1];
  const std::string dir = src + "/tests/fuzz/corpus/gguf/";
  bool ok = true;
  ok &= write_bytes(dir + "tiny_llama.gguf", kairo::gguf::testing::tiny_model_writer().to_bytes());
  kairo::gguf::testing::TinyModelSpec untied;
  untied.tied_output = false;
  ok &= write_bytes(dir + "tiny_llama_untied.gguf", kairo::gguf::testing::tiny_model_writer(untied).to_bytes());
  ok &= write_bytes(dir + "bpe_tokenizer.gguf", bpe_tokenizer().to_bytes());
  ok &= write_bytes(dir + "all_types.gguf", all_types().to_bytes());
  // The first 2 KB of a real converted model: real key names and array headers, cut inside the vocabulary.
  std::ifstream real(src + "/models/aidreams260K.gguf", std::ios::binary);
  std::vector<uint8_t> head(2048);
  real.read(reinterpret_cast<char*>(head.data()), static_cast<std::streamsize>(head.size()));
  ok &= real.gcount() == 2048 && write_bytes(dir + "aidreams_head.gguf", head);
  return ok ? 0 : 1;
}
