// `kairo run` and `kairo inspect` as a user runs them.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "run_command.h"
#include "test_paths.h"

namespace kairo {
namespace {

using nlohmann::json;
using testing::run_kairo;

class RunReference : public ::testing::TestWithParam<std::string> {};

TEST_P(RunReference, JsonOutputReproducesLlamaCpp) {
  std::ifstream in(kairo::testing::source_path("tests/data/reference/aidreams260K." + GetParam() + ".json"));
  const json ref = json::parse(in);
  const auto r =
      run_kairo("run --model " + kairo::testing::demo_model_path() + " --prompt '" + ref["prompt"].get<std::string>() +
                "' --temperature 0 --max-tokens " + std::to_string(ref["steps"].size()) + " --json --logits 3");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json out = json::parse(r.out);
  EXPECT_EQ(out["prompt_tokens"], ref["prompt_tokens"]);
  std::vector<int> want;
  for (const auto& s : ref["steps"]) want.push_back(s["token"]);
  EXPECT_EQ(out["tokens"].get<std::vector<int>>(), want);
  EXPECT_EQ(out["text"].get<std::string>(), ref["text"].get<std::string>());
  ASSERT_EQ(out["logits"].size(), 3u);
  for (size_t step = 0; step < 3; ++step) {
    const auto got = out["logits"][step].get<std::vector<float>>();
    const auto exp = ref["steps"][step]["logits"].get<std::vector<float>>();
    ASSERT_EQ(got.size(), exp.size());
    double max_diff = 0;
    for (size_t i = 0; i < got.size(); ++i) max_diff = std::max(max_diff, std::fabs(double(got[i]) - exp[i]));
    EXPECT_LT(max_diff, 1e-3) << "step " << step;
  }
}

INSTANTIATE_TEST_SUITE_P(Prompts, RunReference, ::testing::Values("i-dream", "the-machine"));

TEST(RunCommand, StopsAtTheContextLengthWithAMessage) {
  const auto r = run_kairo("run --model " + kairo::testing::demo_model_path() +
                           " --prompt 'I dream' --temperature 0 "
                           "--max-tokens 500 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json out = json::parse(r.out);
  EXPECT_EQ(out["stop_reason"], "context_full");
  EXPECT_EQ(out["prompt_tokens"].size() + out["tokens"].size(), 128u);
}

// --ctx-size bounds the KV cache kairo run allocates up front (a long-context model on a small machine).
TEST(RunCommand, CtxSizeBoundsTheContext) {
  const auto r = run_kairo("run --model " + kairo::testing::demo_model_path() +
                           " --prompt 'I dream' --temperature 0 "
                           "--max-tokens 500 --ctx-size 24 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json out = json::parse(r.out);
  EXPECT_EQ(out["stop_reason"], "context_full");
  EXPECT_EQ(out["prompt_tokens"].size() + out["tokens"].size(), 24u);
  const auto shorter = run_kairo("run --model " + kairo::testing::demo_model_path() +
                                 " --prompt 'I dream of a long night' "
                                 "--ctx-size 3");
  EXPECT_EQ(shorter.exit_code, 1);
  EXPECT_NE(shorter.err.find("raise the limit (--ctx-size"), std::string::npos) << shorter.err;
}

TEST(RunCommand, SeededSamplingIsReproducible) {
  const std::string args = "run --model " + kairo::testing::demo_model_path() +
                           " --prompt 'The machine' --temperature 0.9 --seed 42 --max-tokens 20 --json";
  const auto a = run_kairo(args);
  const auto b = run_kairo(args);
  ASSERT_EQ(a.exit_code, 0) << a.err;
  EXPECT_EQ(json::parse(a.out)["tokens"], json::parse(b.out)["tokens"]);
}

TEST(RunCommand, BadModelFileExitsOneWithTheError) {
  const std::string path = ::testing::TempDir() + "/kairo_not_a_model.gguf";
  std::ofstream(path) << "this is not a model";
  const auto r = run_kairo("run --model " + path + " --prompt hi");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "error: " + path + ": offset 0: not a GGUF file (magic is \"this\", expected \"GGUF\")\n");
  std::remove(path.c_str());
}

TEST(InspectCommand, DescribesTheDemoModel) {
  const auto r = run_kairo("inspect " + kairo::testing::demo_model_path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("parameters: 263744"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("model: llama, 4 layers, dim 64, 4 heads (4 KV, head dim 16), ffn 172, vocab 512, context 128"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("general.architecture"), std::string::npos);
}

TEST(InspectCommand, TruncatedFileExitsOne) {
  std::ifstream in(kairo::testing::demo_model_path(), std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string path = ::testing::TempDir() + "/kairo_truncated.gguf";
  std::ofstream(path, std::ios::binary) << bytes.substr(0, 5000);
  const auto r = run_kairo("inspect " + path);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err.rfind("error: " + path + ": offset ", 0), 0u) << r.err;
  std::remove(path.c_str());
}

}  // namespace
}  // namespace kairo

namespace kairo {
namespace {

// `kairo run --json-schema` / `--grammar`: the engine path of constrained output, without the server.
TEST(RunCommand, JsonSchemaAndGrammarConstrainTheOutput) {
  const std::string schema_path = ::testing::TempDir() + "/run_schema.json";
  std::ofstream(schema_path) << R"({"type":"object","properties":{"name":{"type":"string","maxLength":6},)"
                                R"("n":{"type":"integer","minimum":1,"maximum":9}},"required":["name","n"]})";
  int complete = 0;
  for (int seed = 0; seed < 6; ++seed) {
    const auto r = testing::run_kairo("run --model " + kairo::testing::demo_model_path() +
                                      " --prompt Hi --temperature 1 "
                                      "--seed " +
                                      std::to_string(seed) + " --max-tokens 110 --json --json-schema " + schema_path);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const json out = json::parse(r.out);
    if (out["stop_reason"] != "grammar_complete") continue;
    ++complete;
    const json v = json::parse(out["text"].get<std::string>());
    EXPECT_TRUE(v["name"].is_string());
    EXPECT_TRUE(v["n"].is_number_integer() && v["n"] >= 1 && v["n"] <= 9) << v.dump();
  }
  EXPECT_GE(complete, 3);

  const std::string grammar_path = ::testing::TempDir() + "/run_grammar.gbnf";
  std::ofstream(grammar_path) << "root ::= (\"yes\" | \"no\") \"!\"\n";
  const auto g = testing::run_kairo("run --model " + kairo::testing::demo_model_path() +
                                    " --prompt Hi --temperature 1 --seed 1 --json --grammar " + grammar_path);
  ASSERT_EQ(g.exit_code, 0) << g.err;
  const json out = json::parse(g.out);
  EXPECT_EQ(out["stop_reason"], "grammar_complete");
  EXPECT_TRUE(out["text"] == "yes!" || out["text"] == "no!") << out["text"];

  std::ofstream(grammar_path) << "root ::= undefined_rule\n";
  const auto bad =
      testing::run_kairo("run --model " + kairo::testing::demo_model_path() + " --prompt Hi --grammar " + grammar_path);
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("undefined_rule"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace kairo
