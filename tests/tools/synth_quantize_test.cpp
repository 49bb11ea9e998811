// `kairo synth` and `kairo quantize` as a user runs them.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "gguf/gguf_file.h"
#include "run_command.h"
#include "test_paths.h"

namespace kairo {
namespace {

using testing::run_kairo;

std::vector<char> read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string temp_path(const std::string& name) { return ::testing::TempDir() + "/kairo_tools_" + name; }

const std::string kSmall = " --dim 128 --layers 2 --heads 4 --kv-heads 2 --ffn 256 --vocab 512 --context 256";

TEST(SynthCommand, WritesADeterministicModelThatRuns) {
  const std::string a = temp_path("synth_a.gguf"), b = temp_path("synth_b.gguf");
  const std::string tok = " --tokenizer-from " + kairo::testing::demo_model_path();
  auto r = run_kairo("synth " + a + kSmall + tok + " --type Q8_0 --seed 3");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("wrote " + a + ": llama, Q8_0, 0.43 M parameters"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("vocab 512: tokenizer from"), std::string::npos) << r.out;
  ASSERT_EQ(run_kairo("synth " + b + kSmall + tok + " --type Q8_0 --seed 3 --threads 1").exit_code, 0);
  EXPECT_TRUE(read_all(a) == read_all(b));

  auto f = gguf::File::open(a);
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(*f->get_uint("llama.embedding_length"), 128u);
  EXPECT_EQ(f->find_tensor("blk.0.attn_q.weight")->type, DType::Q8_0);
  EXPECT_EQ(f->find_tensor("blk.0.attn_k.weight")->dims, (std::vector<int64_t>{128, 64}));

  auto run = run_kairo("run --model " + a + " --prompt 'Once' --temperature 0 --max-tokens 4 --json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(nlohmann::json::parse(run.out)["tokens"].size(), 4u);
  std::remove(a.c_str());
  std::remove(b.c_str());
}

TEST(SynthCommand, UserErrorsSayWhatToChange) {
  auto r = run_kairo("synth llama-9000 " + temp_path("x.gguf"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("unknown model preset \"llama-9000\"; known presets: tinyllama-1.1b"), std::string::npos)
      << r.err;
  r = run_kairo("synth " + temp_path("x.gguf") + " --dim 64");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("give a preset"), std::string::npos) << r.err;
  r = run_kairo("synth " + temp_path("x.gguf") + kSmall + " --type Q3_K");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("unknown type \"Q3_K\""), std::string::npos) << r.err;
  r = run_kairo("synth " + temp_path("x.gguf") + kSmall + " --tokenizer-from /nonexistent.gguf");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("tokenizer source \"/nonexistent.gguf\" cannot be read"), std::string::npos) << r.err;
  EXPECT_FALSE(std::ifstream(temp_path("x.gguf")).good());
}

TEST(QuantizeCommand, ReproducesLlamaQuantizesQ4KM) {
  const std::string out = temp_path("q4km.gguf");
  auto r =
      run_kairo("quantize " + kairo::testing::shared_path("models/synth-llama-gqa.f16.gguf") + " " + out + " Q4_K_M");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("Q4_K    13 tensors"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Q6_K     3 tensors"), std::string::npos) << r.out;
  EXPECT_TRUE(read_all(out) == read_all(kairo::testing::shared_path("models/synth-llama-gqa.Q4_K_M.gguf")));
  std::remove(out.c_str());
}

TEST(QuantizeCommand, BadTypeAndMissingInput) {
  auto r = run_kairo("quantize " + kairo::testing::shared_path("models/synth-llama-gqa.f16.gguf") + " " +
                     temp_path("y.gguf") + " Q7_0");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("unknown type \"Q7_0\"; use one of F32, F16"), std::string::npos) << r.err;
  r = run_kairo("quantize /nonexistent.gguf " + temp_path("y.gguf") + " Q8_0");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("/nonexistent.gguf"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace kairo
