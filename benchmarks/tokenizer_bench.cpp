// Tokenizer throughput (Google Benchmark), in input MB/s, for each tokenizer type on the vocabularies in ../shared:
// realistic prose (English markdown, repeated to 1 MiB), pathological runs of one character at growing sizes (time
// should grow linearly), special-token parsing, and decoding.
//
//   tokenizer_bench [--benchmark_filter=Encode]      (run from anywhere; paths are compiled in)
#include <benchmark/benchmark.h>

#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>

#include "gguf/gguf_file.h"
#include "tokenizer/tokenizer.h"

namespace {

using kairo::tokenizer::Tokenizer;

struct Vocab {
  const char* label;  // tokenizer type / pre-tokenizer
  const char* path;   // under ../shared
};

const Vocab kVocabs[] = {
    {"spm/llama", "vocab/ggml-vocab-llama-spm.gguf"},
    {"bpe/gpt-2", "vocab/ggml-vocab-gpt-2.gguf"},
    {"bpe/deepseek-llm", "vocab/ggml-vocab-deepseek-llm.gguf"},
    {"bpe/falcon", "vocab/ggml-vocab-falcon.gguf"},
    {"bpe/starcoder", "vocab/ggml-vocab-starcoder.gguf"},
};

const Tokenizer& tokenizer(const char* rel) {
  static std::map<std::string, std::unique_ptr<Tokenizer>> cache;
  auto& slot = cache[rel];
  if (!slot) {
    auto file = kairo::gguf::File::open(std::string(KAIRO_SHARED_DIR) + "/" + rel);
    if (!file.ok()) throw std::runtime_error(file.error().message);
    auto tok = Tokenizer::from_gguf(*file);
    if (!tok.ok()) throw std::runtime_error(tok.error().message);
    slot = std::move(tok).value();
  }
  return *slot;
}

const std::string& prose() {
  static const std::string text = [] {
    std::ifstream in(std::string(KAIRO_SHARED_DIR) + "/STYLE.md", std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    std::string base = ss.str();
    if (base.empty()) base = "The quick brown fox jumps over the lazy dog. ";
    std::string out;
    while (out.size() < (1u << 20)) out += base;
    return out;
  }();
  return text;
}

void encode_prose(benchmark::State& state, const Vocab& v) {
  const Tokenizer& tok = tokenizer(v.path);
  const std::string& text = prose();
  size_t n_tokens = 0;
  for (auto _ : state) {
    auto ids = tok.encode(text, true, false);
    n_tokens = ids.size();
    benchmark::DoNotOptimize(ids.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
  state.counters["tokens"] = static_cast<double>(n_tokens);
  state.counters["bytes/token"] = static_cast<double>(text.size()) / static_cast<double>(n_tokens);
}

// One character repeated: a single huge word (BPE) or symbol chain (SPM). MB/s should stay flat across sizes.
void encode_repeated(benchmark::State& state, const Vocab& v, const char* unit) {
  const Tokenizer& tok = tokenizer(v.path);
  std::string text;
  while (text.size() < static_cast<size_t>(state.range(0))) text += unit;
  for (auto _ : state) benchmark::DoNotOptimize(tok.encode(text, false, false).data());
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
}

void encode_with_specials(benchmark::State& state, const Vocab& v) {
  const Tokenizer& tok = tokenizer(v.path);
  std::string text;
  while (text.size() < (1u << 20)) text += "<|endoftext|>Hello there, how are you today?\n<s>[INST] fine [/INST]";
  for (auto _ : state) benchmark::DoNotOptimize(tok.encode(text, false, true).data());
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
}

void decode_prose(benchmark::State& state, const Vocab& v) {
  const Tokenizer& tok = tokenizer(v.path);
  const auto ids = tok.encode(prose(), false, false);
  for (auto _ : state) benchmark::DoNotOptimize(tok.decode(ids).data());
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * prose().size()));
}

const int kRegistered = [] {
  for (const Vocab& v : kVocabs) {
    const std::string l = v.label;
    benchmark::RegisterBenchmark(("Encode/prose/" + l).c_str(), encode_prose, v)->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("Encode/specials/" + l).c_str(), encode_with_specials, v)
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("Encode/repeat_a/" + l).c_str(), encode_repeated, v, "a")
        ->RangeMultiplier(10)->Range(10000, 1000000)->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("Encode/repeat_space/" + l).c_str(), encode_repeated, v, " ")
        ->RangeMultiplier(10)->Range(10000, 1000000)->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("Decode/prose/" + l).c_str(), decode_prose, v)->Unit(benchmark::kMillisecond);
  }
  return 0;
}();

}  // namespace

BENCHMARK_MAIN();
