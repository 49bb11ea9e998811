// `kairo plan` as a user runs it: JSON numbers on the synthetic model and a custom device, presets, and the errors
// for bad input (a message and exit status 1, never a crash).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "run_command.h"

namespace kairo {
namespace {

using testing::run_kairo;

const std::string kSynth = std::string(KAIRO_SHARED_DIR) + "/models/synth-llama-gqa.Q8_0.gguf";

TEST(PlanCli, JsonOnCustomDeviceMatchesHandCounts) {
  const auto r = run_kairo("plan --model " + kSynth +
                           " --device custom --mem-gb 1 --bandwidth-gbs 100 --tflops 10 --usable-fraction 1 "
                           "--context 512 --concurrency 4 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["weights"]["bytes"], 1885184);  // 1769472 Q8_0 values × 34/32 + 1280 F32 values × 4
  EXPECT_EQ(j["memory"]["kv_bytes_per_token"], 512);
  EXPECT_EQ(j["memory"]["kv_bytes"], 4 * 512 * 512);
  EXPECT_EQ(j["memory"]["fits"], true);
  EXPECT_EQ(j["device"]["memory_bytes"], 1 << 30);
  EXPECT_EQ(j["limits"]["max_context_at_concurrency"], 512);
  // Bandwidth-bound decode: 100 GB/s over (weights read per token + 4 × 512 × 512 B of KV).
  EXPECT_DOUBLE_EQ(j["bounds"]["decode_tps_per_stream"].get<double>(), 100e9 / (1746192.0 + 4 * 262144.0));
}

TEST(PlanCli, PresetWithWeightsDtypeAndCatalogDevice) {
  const auto r = run_kairo("plan --preset llama-3-70b --weights-dtype q4_k --device h100-sxm --context 8192 "
                           "--concurrency 16");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("DOES NOT FIT"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("lower --context to 6864, or lower --concurrency to 13"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("largest concurrency at context 8192: 13"), std::string::npos) << r.out;
}

// The synthetic llama was made for 512 tokens: 4096 fits in 1 GiB, but it is not a context the model can use, and
// `kairo serve` would refuse it. The plan must say that rather than "fits".
TEST(PlanCli, ContextBeyondTheModelsIsReported) {
  const std::string args = "plan --model " + kSynth +
                           " --device custom --mem-gb 1 --bandwidth-gbs 100 --tflops 10 --context 4096";
  const auto human = run_kairo(args);
  ASSERT_EQ(human.exit_code, 0) << human.err;
  EXPECT_NE(human.out.find("context: TOO LONG FOR THE MODEL. --context 4096 is beyond the model's trained context of "
                           "512 tokens (llama.context_length)"),
            std::string::npos)
      << human.out;
  EXPECT_NE(human.out.find("Lower --context to 512 or less"), std::string::npos) << human.out;
  EXPECT_NE(human.out.find("fits in memory, but the context is beyond the model's (above)"), std::string::npos)
      << human.out;
  EXPECT_EQ(human.out.find("usable: fits |"), std::string::npos) << human.out;
  EXPECT_NE(human.out.find("refuses to start (--max-model-len 4096 is larger than the model's context length of 512 "
                           "tokens; use at most 512)"),
            std::string::npos)
      << human.out;

  const auto r = run_kairo(args + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["context"]["requested"], 4096);
  EXPECT_EQ(j["context"]["trained"], 512);
  EXPECT_EQ(j["context"]["fits"], false);
  EXPECT_EQ(j["context"]["rope_scaling"], "none");
  EXPECT_NE(j["context"]["advice"].get<std::string>().find("never saw in training"), std::string::npos);
  EXPECT_EQ(j["memory"]["fits"], true);  // memory alone: the verdict on the context is j["context"]
  EXPECT_NE(j["kv_pool"]["error"].get<std::string>().find("larger than the model's context length"),
            std::string::npos);

  const auto within = run_kairo("plan --model " + kSynth +
                                " --device custom --mem-gb 1 --bandwidth-gbs 100 --tflops 10 --context 512 --json");
  ASSERT_EQ(within.exit_code, 0) << within.err;
  const auto w = nlohmann::json::parse(within.out);
  EXPECT_EQ(w["context"]["fits"], true);
  EXPECT_FALSE(w["context"].contains("advice"));
}

TEST(PlanCli, ListShowsDevicesAndPresets) {
  const auto r = run_kairo("plan --list");
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("mi300x"), std::string::npos);
  EXPECT_NE(r.out.find("qwen2.5-0.5b"), std::string::npos);
}

TEST(PlanCli, BadInputIsAMessage) {
  const std::pair<std::string, std::string> cases[] = {
      {"plan --device h100-sxm", "give exactly one of --model FILE.gguf or --preset NAME"},
      {"plan --preset llama-9 --device h100-sxm", "unknown model preset \"llama-9\""},
      {"plan --preset llama-3-8b --device tpu", "unknown device \"tpu\""},
      {"plan --preset llama-3-8b --device h200 --kv-dtype q4_0", "--kv-dtype \"q4_0\" is not supported"},
      {"plan --preset llama-3-8b --device custom --mem-gb 8", "a custom device needs at least --mem-gb and"},
      {"plan --model /nonexistent.gguf --device h200", "/nonexistent.gguf"},
      {"plan --preset llama-3-8b --device h200 --concurrency 0", "must be positive"},
  };
  for (const auto& [args, want] : cases) {
    const auto r = run_kairo(args);
    EXPECT_EQ(r.exit_code, 1) << args;
    EXPECT_NE(r.err.find(want), std::string::npos) << args << ": " << r.err;
  }
}

}  // namespace
}  // namespace kairo
