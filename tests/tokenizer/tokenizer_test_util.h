#pragma once
// Shared by the tokenizer tests: loading tokenizers from ../shared once per process, and llama.cpp's
// ggml-vocab-*.gguf.inp/.out test vectors.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "gguf/gguf_file.h"
#include "tokenizer/tokenizer.h"

namespace kairo::tokenizer::testing {

// The real tokenizers of the vocab-vector suite (SentencePiece and BPE with several pre-tokenizers) and the demo
// model's.
inline constexpr const char* kRealTokenizers[] = {
    "vocab/ggml-vocab-llama-spm.gguf", "vocab/ggml-vocab-phi-3.gguf",  "vocab/ggml-vocab-gpt-2.gguf",
    "vocab/ggml-vocab-deepseek-llm.gguf", "vocab/ggml-vocab-falcon.gguf", "vocab/ggml-vocab-starcoder.gguf",
    "vocab/ggml-vocab-refact.gguf",    "models/aidreams260K.gguf"};

// A fixture by its path under ../shared, preferring the project's own copy (tests/data/<rel>, or <rel> in the
// checkout, e.g. models/aidreams260K.gguf) so the suite runs on a fresh clone for whatever has been copied in.
inline std::string shared_path(const std::string& rel) {
  for (const std::string& candidate : {std::string(KAIRO_SOURCE_DIR) + "/tests/data/" + rel,
                                       std::string(KAIRO_SOURCE_DIR) + "/" + rel}) {
    if (std::ifstream(candidate).good()) return candidate;
  }
  return std::string(KAIRO_SHARED_DIR) + "/" + rel;
}

inline std::string read_file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << "cannot open " << path;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Loads (once) the tokenizer of a GGUF under ../shared. Fails the test with the load error otherwise.
inline const Tokenizer& shared_tokenizer(const std::string& rel) {
  static std::map<std::string, std::unique_ptr<Tokenizer>> cache;
  auto it = cache.find(rel);
  if (it == cache.end()) {
    auto file = gguf::File::open(shared_path(rel));
    if (!file.ok()) throw std::runtime_error(file.error().message);
    auto tok = Tokenizer::from_gguf(*file);
    if (!tok.ok()) throw std::runtime_error(tok.error().message);
    it = cache.emplace(rel, std::move(tok).value()).first;
  }
  return *it->second;
}

struct VocabCase {
  std::string text;
  std::vector<int32_t> ids;
};

// .inp: texts separated by "\n__ggml_vocab_test__\n"; .out: one line of space-separated ids per text.
inline std::vector<VocabCase> read_vocab_cases(const std::string& gguf_rel) {
  const std::string inp = read_file_bytes(shared_path(gguf_rel + ".inp"));
  const std::string out = read_file_bytes(shared_path(gguf_rel + ".out"));
  const std::string sep = "\n__ggml_vocab_test__\n";
  std::vector<std::string> texts;
  size_t pos = 0;
  while (true) {
    const size_t next = inp.find(sep, pos);
    if (next == std::string::npos) break;
    texts.push_back(inp.substr(pos, next - pos));
    pos = next + sep.size();
  }
  std::vector<VocabCase> cases;
  std::istringstream lines(out);
  std::string line;
  for (const std::string& t : texts) {
    EXPECT_TRUE(static_cast<bool>(std::getline(lines, line))) << "fewer .out lines than .inp texts";
    VocabCase c{t, {}};
    std::istringstream ids(line);
    int32_t id;
    while (ids >> id) c.ids.push_back(id);
    cases.push_back(std::move(c));
  }
  return cases;
}

}  // namespace kairo::tokenizer::testing
