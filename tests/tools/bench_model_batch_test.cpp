// `kairo bench model` and `kairo bench batch` on a tiny synthetic model: well-formed tables and JSON.
#include <gtest/gtest.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "run_command.h"
#include "test_paths.h"

namespace kairo {
namespace {

using nlohmann::json;
using testing::run_kairo;

class BenchCommands : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    // Per process: ctest runs each test of this suite in its own process, possibly at the same time.
    model_ = ::testing::TempDir() + "/kairo_bench_tiny_" + std::to_string(::getpid()) + ".gguf";
    const auto r = run_kairo("synth " + model_ +
                             " --dim 128 --layers 2 --heads 4 --kv-heads 2 --ffn 256 --vocab 512"
                             " --context 256 --type Q8_0 --tokenizer-from " +
                             kairo::testing::demo_model_path());
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  static void TearDownTestSuite() { std::remove(model_.c_str()); }
  static std::string model_;
};
std::string BenchCommands::model_;

std::vector<std::string> lines_starting_with(const std::string& text, const std::string& prefix) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(prefix, 0) == 0) out.push_back(line);
  }
  return out;
}

int count(const std::string& s, char c) { return static_cast<int>(std::count(s.begin(), s.end(), c)); }

TEST_F(BenchCommands, ModelPrintsAMarkdownRowPerTest) {
  const auto r = run_kairo("bench model --model " + model_ +
                           " --pp 16,32 --tg 8 --reps 2 --threads 2 --bandwidth-gbs 20 --int8-tops 2");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("ceilings: read 20.0 GB/s (given), int8 2.00 TOP/s (given)"), std::string::npos) << r.out;
  const auto rows = lines_starting_with(r.out, "| ");
  ASSERT_EQ(rows.size(), 7u) << r.out;  // header, separator, pp16 and pp32 (relaxed, exact), tg8
  EXPECT_EQ(rows[0], "| model | backend | threads | test | t/s | GB/s | % of read bw | TOP/s | % of int8 |");
  for (const auto& row : rows) EXPECT_EQ(count(row, '|'), 10) << row;
  EXPECT_NE(rows[2].find("| 2 | pp16 relaxed |"), std::string::npos) << rows[2];
  EXPECT_NE(rows[3].find("| 2 | pp16 exact |"), std::string::npos) << rows[3];
  EXPECT_NE(rows[4].find("| pp32 relaxed |"), std::string::npos) << rows[4];
  EXPECT_NE(rows[5].find("| pp32 exact |"), std::string::npos) << rows[5];
  EXPECT_NE(rows[6].find("| tg8 |"), std::string::npos) << rows[6];
  EXPECT_NE(rows[6].find(" %"), std::string::npos) << rows[6];
}

TEST_F(BenchCommands, ModelJsonHasTheFiguresAndTheirBasis) {
  const auto r = run_kairo("bench model --model " + model_ + " --pp 16 --tg 4 --reps 3 --json --numerics exact"
                           " --roofline-buffer-mb 8 --roofline-seconds 0.01");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j["read_gbs_source"], "measured");
  EXPECT_GT(j["read_gbs"].get<double>(), 0.0);
  EXPECT_GT(j["read_prefetch_gbs"].get<double>(), 0.0);  // the second ceiling, read as the decode kernels read
  EXPECT_GT(j["int8_tops"].get<double>(), 0.0);
  // Q8_0 (34 bytes per 32) matrices: per layer q,o 128x128, k,v 64x128, gate,up,down 256x128; output 512x128 in
  // Q8_0 (128 % 256 != 0 keeps it from Q6_K); plus one embedding row.
  const uint64_t layer = 2 * 128 * 128 + 2 * 64 * 128 + 3 * 256 * 128;
  const uint64_t matmul = 2 * layer + 512 * 128;
  EXPECT_EQ(j["decode_bytes_per_token"].get<uint64_t>(), matmul / 32 * 34 + 128 / 32 * 34);
  EXPECT_EQ(j["matmul_params_per_token"].get<uint64_t>(), matmul);
  ASSERT_EQ(j["tests"].size(), 2u);
  const json& pp = j["tests"][0];
  EXPECT_EQ(pp["test"], "pp16 exact");
  EXPECT_EQ(pp["samples_s"].size(), 3u);
  EXPECT_GT(pp["avg_ts"].get<double>(), 0.0);
  EXPECT_TRUE(pp.contains("tops") && pp.contains("pct_of_int8") && !pp.contains("gbs"));
  const json& tg = j["tests"][1];
  EXPECT_EQ(tg["test"], "tg4");
  EXPECT_TRUE(tg.contains("gbs") && tg.contains("pct_of_read_bandwidth") && !tg.contains("tops"));
  EXPECT_TRUE(tg.contains("pct_of_prefetch_read_bandwidth"));
  // GB/s is bytes per token x tokens per second.
  EXPECT_NEAR(tg["gbs"].get<double>(), j["decode_bytes_per_token"].get<double>() * tg["avg_ts"].get<double>() * 1e-9,
              1e-9 * tg["gbs"].get<double>() + 1e-12);
}

TEST_F(BenchCommands, ModelRefusesUnknownNumerics) {
  const auto r = run_kairo("bench model --model " + model_ + " --numerics fast --bandwidth-gbs 1 --int8-tops 1");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("--numerics takes relaxed and/or exact, not 'fast'"), std::string::npos) << r.err;
}

TEST_F(BenchCommands, ModelRefusesTestsLongerThanTheContext) {
  const auto r = run_kairo("bench model --model " + model_ + " --pp 300 --bandwidth-gbs 1 --int8-tops 1");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("a test of 300 tokens does not fit the model's context of 256 tokens"), std::string::npos)
      << r.err;
}

TEST_F(BenchCommands, BatchPrintsARowPerBatchSize) {
  const auto r = run_kairo("bench batch --model " + model_ + " --batch 1,3 --prompt 8 --gen 4 --threads 2");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto rows = lines_starting_with(r.out, "| ");
  ASSERT_EQ(rows.size(), 4u) << r.out;
  EXPECT_EQ(rows[0], "| B | PP | TG | T_PP s | S_PP t/s | T_TG s | S_TG t/s | T s | S t/s |");
  EXPECT_EQ(rows[2].rfind("| 1 | 8 | 4 | ", 0), 0u) << rows[2];
  EXPECT_EQ(rows[3].rfind("| 3 | 24 | 12 | ", 0), 0u) << rows[3];
}

TEST_F(BenchCommands, BatchJsonCountsTheGenerationPhase) {
  const auto r = run_kairo("bench batch --model " + model_ + " --batch 2,4 --prompt 8 --gen 5 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json j = json::parse(r.out);
  ASSERT_EQ(j["rows"].size(), 2u);
  for (const json& row : j["rows"]) {
    const int n = row["n_seqs"];
    // The generation phase starts when the last sequence has its first token: at least that sequence's other 4
    // tokens fall in it, at most every sequence's.
    EXPECT_EQ(row["total_tokens"].get<int>(), n * 5);
    EXPECT_GE(row["gen_tokens"].get<int>(), 4);
    EXPECT_LE(row["gen_tokens"].get<int>(), n * 4);
    EXPECT_GT(row["gen_ts"].get<double>(), 0.0);
    EXPECT_NEAR(row["total_s"].get<double>(), row["prefill_s"].get<double>() + row["gen_s"].get<double>(), 1e-9);
  }
}

TEST_F(BenchCommands, BatchSpeculatesWithTheOracleAndADraftModelAndReportsAcceptance) {
  // The oracle: every proposal right, the outputs checked equal to the run without speculation (both rows printed).
  const auto oracle = run_kairo("bench batch --model " + model_ +
                                " --batch 2 --prompt 8 --gen 12 --threads 2 --speculative oracle --speculative-always");
  ASSERT_EQ(oracle.exit_code, 0) << oracle.err;
  const auto rows = lines_starting_with(oracle.out, "| 2 ");
  ASSERT_EQ(rows.size(), 2u) << oracle.out;
  EXPECT_NE(rows[0].find("| off |"), std::string::npos) << rows[0];
  EXPECT_NE(rows[1].find("| oracle | 100.0 % |"), std::string::npos) << rows[1];
  // The model as its own draft: the same greedy guesses, all accepted.
  const auto draft = run_kairo("bench batch --model " + model_ + " --draft-model " + model_ +
                               " --batch 1 --prompt 8 --gen 12 --threads 2 --speculative-always --json");
  ASSERT_EQ(draft.exit_code, 0) << draft.err;
  const json row = json::parse(draft.out)["rows"][0];
  EXPECT_EQ(row["speculative"], "draft");
  EXPECT_GT(row["spec_draft_tokens"].get<int>(), 0);
  EXPECT_EQ(row["spec_accepted_tokens"], row["spec_draft_tokens"]);
}

TEST_F(BenchCommands, ADraftModelWithAnotherTokenizerIsRefused) {
  const std::string other = ::testing::TempDir() + "/kairo_bench_othertok_" + std::to_string(::getpid()) + ".gguf";
  ASSERT_EQ(run_kairo("synth " + other + " --dim 64 --layers 1 --heads 2 --ffn 64 --vocab 600 --tokenizer-from " +
                      kairo::testing::demo_model_path())
                .exit_code,
            0);
  const auto r = run_kairo("bench batch --model " + model_ + " --draft-model " + other + " --batch 1");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("a draft model must share the model's tokenizer"), std::string::npos) << r.err;
  const auto bad = run_kairo("bench batch --model " + model_ + " --speculative bogus --batch 1");
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("use none, ngram or draft"), std::string::npos) << bad.err;
  std::remove(other.c_str());
}

TEST_F(BenchCommands, BatchNeedsATokenizer) {
  const std::string bare = ::testing::TempDir() + "/kairo_bench_notok.gguf";
  ASSERT_EQ(run_kairo("synth " + bare + " --dim 64 --layers 1 --heads 2 --ffn 64 --vocab 64 --tokenizer-from none")
                .exit_code, 0);
  const auto r = run_kairo("bench batch --model " + bare + " --batch 1");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("the engine needs the model's tokenizer"), std::string::npos) << r.err;
  std::remove(bare.c_str());
}

}  // namespace
}  // namespace kairo
