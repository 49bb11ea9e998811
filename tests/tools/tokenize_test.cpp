// `kairo tokenize` and `kairo detokenize` as a user runs them.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "run_command.h"
#include "test_paths.h"

namespace kairo {
namespace {

using nlohmann::json;
using testing::run_kairo;

TEST(TokenizeCommand, PrintsTheTokensAsJson) {
  const std::string model = kairo::testing::demo_model_path();
  auto r = run_kairo("tokenize --model " + model + " --text 'I dream'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "{\"tokens\":[1,303,281,269,435,447]}\n");
  r = run_kairo("tokenize --model " + model + " --text 'I dream' --no-bos");
  EXPECT_EQ(r.out, "{\"tokens\":[303,281,269,435,447]}\n");
  r = run_kairo("tokenize --model " + model + " --text 'a</s>b' --parse-special");
  EXPECT_EQ(json::parse(r.out)["tokens"], json::parse("[1,262,2,294]"));
  r = run_kairo("tokenize --model " + model + " --text 'a</s>b'");
  EXPECT_EQ(json::parse(r.out)["tokens"].size(), 7u);  // "</s>" spelled as text
}

TEST(TokenizeCommand, ReadsTheTextFromAFile) {
  const std::string path = ::testing::TempDir() + "/kairo_tokenize_input.txt";
  std::ofstream(path, std::ios::binary) << "I dream\n";
  const auto r = run_kairo("tokenize --model " + kairo::testing::demo_model_path() + " --file " + path);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "{\"tokens\":[1,303,281,269,435,447,13]}\n");  // <0x0A> = 3 + 10
  std::remove(path.c_str());
}

TEST(TokenizeCommand, ErrorsExitOneWithTheMessage) {
  const std::string model = kairo::testing::demo_model_path();
  auto r = run_kairo("tokenize --model " + model);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "error: give the text with exactly one of --text or --file\n");
  r = run_kairo("tokenize --model " + model + " --text a --file /etc/hostname");
  EXPECT_EQ(r.exit_code, 1);
  r = run_kairo("tokenize --model /nonexistent/m.gguf --text a");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("/nonexistent/m.gguf"), std::string::npos) << r.err;
  r = run_kairo("tokenize --model " + model + " --file /nonexistent/input.txt");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("/nonexistent/input.txt"), std::string::npos) << r.err;
}

TEST(DetokenizeCommand, PrintsTheText) {
  const std::string model = kairo::testing::demo_model_path();
  auto r = run_kairo("detokenize --model " + model + " --tokens 303,281,269,435,447");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "I dream\n");
  r = run_kairo("detokenize --model " + model + " --tokens '303, 281,269,435,447,2' --special");
  EXPECT_EQ(r.out, "I dream</s>\n");
}

TEST(DetokenizeCommand, BadIdsExitOneWithTheMessage) {
  const std::string model = kairo::testing::demo_model_path();
  auto r = run_kairo("detokenize --model " + model + " --tokens 1,x");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "error: --tokens: \"x\" is not a token id (expected comma-separated integers like 1,2,3)\n");
  r = run_kairo("detokenize --model " + model + " --tokens 1,512");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "error: token id 512 (position 1) is outside the vocabulary: ids go from 0 to 511\n");
  r = run_kairo("detokenize --model " + model + " --tokens 99999999999");
  EXPECT_EQ(r.exit_code, 1);
}

}  // namespace
}  // namespace kairo
