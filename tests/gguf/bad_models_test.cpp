// The adversarial model-file corpus (tests/data/bad_models, see bad_model_corpus.h): each file on disk, loaded the
// way `kairo serve` loads a model, fails with exactly the expected error -- never a crash, an abort or a hang.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "bad_model_corpus.h"
#include "engine/engine.h"
#include "model/config.h"
#include "model/model.h"
#include "test_paths.h"
#include "tokenizer/tokenizer.h"

namespace kairo::gguf {
namespace {

std::string corpus_path(const std::string& file) {
  return kairo::testing::source_path("tests/data/bad_models/" + file);
}

// The first error of: open + parse + config + weights (Model::load), tokenizer, engine; "" when all succeed.
std::string load_error(const std::string& path) {
  auto model = model::Model::load(path);
  if (!model.ok()) return model.error().message;
  auto tok = tokenizer::Tokenizer::from_gguf((*model)->file());
  if (!tok.ok()) return tok.error().message;
  engine::EngineConfig config;
  config.n_threads = 1;
  config.n_kv_blocks = 8;
  auto engine = engine::Engine::create(**model, **tok, config);
  if (!engine.ok()) return engine.error().message;
  return "";
}

std::string with_path(std::string expected, const std::string& path) {
  const std::string key = "{path}";
  for (size_t at = 0; (at = expected.find(key, at)) != std::string::npos; at += path.size()) {
    expected.replace(at, key.size(), path);
  }
  return expected;
}

TEST(BadModels, CheckedInFilesMatchTheGenerator) {
  for (const auto& m : testing::bad_model_corpus()) {
    std::ifstream in(corpus_path(m.file), std::ios::binary);
    ASSERT_TRUE(in) << m.file << " is missing; run kairo_make_bad_models tests/data/bad_models";
    const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_TRUE(bytes == m.bytes) << m.file << " differs from bad_model_corpus.h; run kairo_make_bad_models";
  }
}

TEST(BadModels, EachFileGivesItsExactError) {
  for (const auto& m : testing::bad_model_corpus()) {
    const std::string path = corpus_path(m.file);
    EXPECT_EQ(load_error(path), with_path(m.expected, path)) << m.file << ": " << m.what;
  }
}

TEST(BadModels, CutAtEveryOffsetGivesALocatedError) {
  // The valid tiny model cut at every length, written to disk and loaded as a model: never a crash or a hang,
  // always "<path>: offset N: ..." (its last tensor ends the file, so every cut is short of something).
  std::ifstream in(corpus_path("ok_tiny_llama.gguf"), std::ios::binary);
  const std::vector<uint8_t> full((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_EQ(full.size(), 4416u);
  const std::string path = ::testing::TempDir() + "/kairo_cut_model.gguf";
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(full.data()), static_cast<std::streamsize>(full.size()));
  }
  for (size_t n = full.size(); n-- > 0;) {  // shorten the one file in place: no rewrite per cut
    ASSERT_EQ(::truncate(path.c_str(), static_cast<off_t>(n)), 0);
    const std::string err = load_error(path);
    ASSERT_EQ(err.rfind(path + ": offset ", 0), 0u) << "cut at " << n << ": " << err;
  }
  ::unlink(path.c_str());
}

TEST(BadModels, ReadConfigAloneReportsConfigErrors) {
  // The planner reads the config from a header-only parse, without binding weights: same message.
  const std::string path = corpus_path("block_count_string.gguf");
  auto file = File::open(path);
  ASSERT_TRUE(file.ok()) << file.error().message;
  auto config = model::read_config(*file);
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.error().message,
            path + ": metadata key 'llama.block_count' should be a non-negative integer, but is string \"1\"");
}

TEST(BadModels, DirectoryOrFifoPath) {
  const std::string dir = kairo::testing::source_path("tests/data/bad_models");
  EXPECT_EQ(load_error(dir), dir + ": is a directory, expected a file");
  const std::string fifo = ::testing::TempDir() + "/kairo_bad_models_fifo.gguf";
  ::unlink(fifo.c_str());
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string err = load_error(fifo);  // must not block waiting for a writer
  ::unlink(fifo.c_str());
  EXPECT_EQ(err, fifo + ": is not a regular file (FIFO, socket or device), expected a file");
  EXPECT_EQ(load_error("/nonexistent/model.gguf"), "/nonexistent/model.gguf: cannot open: No such file or directory");
}

}  // namespace
}  // namespace kairo::gguf
