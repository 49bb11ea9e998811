// `kairo serve` sizes its KV pool with the planner's code: the capacity it prints at startup is the one
// `kairo plan --json` predicts for the same model, context, concurrency and KV type, and a budget too small for the
// requested context is refused with the planner's message (exit 1, no crash).
#include <gtest/gtest.h>

#include <cstdlib>
#include <nlohmann/json.hpp>

#include "run_command.h"
#include "serve_startup.h"
#include "test_paths.h"

namespace kairo {
namespace {

using testing::printed_kv_tokens;
using testing::run_kairo;
using testing::start_and_stop_serve;

const std::string kSynth = std::string(KAIRO_SHARED_DIR) + "/models/synth-llama-gqa.Q8_0.gguf";
using kairo::testing::demo_model_path;

nlohmann::json plan_json(const std::string& args) {
  // --bandwidth-gbs / --tflops skip the roofline measurement; memory is still this machine's MemAvailable.
  const auto r = run_kairo("plan --device cpu --bandwidth-gbs 10 --tflops 1 --json " + args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return r.exit_code == 0 ? nlohmann::json::parse(r.out) : nlohmann::json::object();
}

struct Case {
  std::string model;
  int context, concurrency, batch_tokens;
  std::string kv_dtype;
};

TEST(ServeKvPlan, AutomaticBudgetCapacityIsWhatPlanPredicts) {
  const Case cases[] = {
      {demo_model_path(), 128, 8, 512, "f16"},  // the demo model's whole context
      {kSynth, 512, 4, 256, "q8_0"},
      {kSynth, 200, 3, 64, "bf16"},  // a partial last block
  };
  for (const Case& c : cases) {
    const std::string what = c.model + " L=" + std::to_string(c.context) + " C=" + std::to_string(c.concurrency);
    const auto plan = plan_json("--model " + c.model + " --context " + std::to_string(c.context) + " --concurrency " +
                                std::to_string(c.concurrency) + " --max-batch-tokens " +
                                std::to_string(c.batch_tokens) + " --kv-dtype " + c.kv_dtype);
    ASSERT_TRUE(plan.contains("kv_pool") && plan["kv_pool"].contains("n_token_slots")) << plan.dump();
    const auto serve = start_and_stop_serve(
        "--model " + c.model + " --max-model-len " + std::to_string(c.context) + " --max-num-seqs " +
        std::to_string(c.concurrency) + " --max-num-batched-tokens " + std::to_string(c.batch_tokens) +
        " --kv-dtype " + c.kv_dtype);
    EXPECT_TRUE(serve.served()) << what << "\n" << serve.log;
    EXPECT_NE(serve.log.find("(90 % of "), std::string::npos) << serve.log;  // the automatic budget
    EXPECT_EQ(printed_kv_tokens(serve.log), plan["kv_pool"]["n_token_slots"].get<int64_t>()) << what << "\n"
                                                                                             << serve.log;
    // This machine has room for the whole batch: C sequences of L, rounded up to blocks of 16.
    EXPECT_EQ(plan["kv_pool"]["n_token_slots"].get<int64_t>(), c.concurrency * ((c.context + 15) / 16) * 16);
  }
}

// With a fixed budget the pool is what the budget leaves (not the batch cap), and still the plan's number.
TEST(ServeKvPlan, FixedBudgetCapacityIsWhatPlanPredicts) {
  const auto plan = plan_json("--model " + kSynth + " --mem-gb 0.145 --usable-fraction 1 --context 512 "
                              "--concurrency 64");
  ASSERT_TRUE(plan["kv_pool"].contains("n_token_slots")) << plan.dump();
  const int64_t predicted = plan["kv_pool"]["n_token_slots"].get<int64_t>();
  EXPECT_LT(predicted, 64 * 512);  // the budget binds, not --max-num-seqs
  EXPECT_TRUE(plan.contains("to_fit"));
  const auto serve = start_and_stop_serve("--model " + kSynth + " --mem-budget-gb 0.145 --max-model-len 512 "
                                          "--max-num-seqs 64");
  EXPECT_TRUE(serve.served()) << serve.log;
  EXPECT_NE(serve.log.find("(--mem-budget-gb)"), std::string::npos) << serve.log;
  EXPECT_EQ(printed_kv_tokens(serve.log), predicted) << serve.log;
}

// A draft model's weights and its KV pool (as many token slots as the model's) come out of the same budget: the
// model as its own draft halves the KV tokens a fixed budget leaves for the KV (both pools cost the same per token).
TEST(ServeKvPlan, ADraftModelsWeightsAndKvComeOutOfTheBudget) {
  const std::string budget = "--model " + kSynth + " --mem-budget-gb 0.145 --max-model-len 512 --max-num-seqs 64";
  const auto alone = start_and_stop_serve(budget);
  const auto drafted = start_and_stop_serve(budget + " --draft-model " + kSynth);
  ASSERT_TRUE(alone.served()) << alone.log;
  ASSERT_TRUE(drafted.served()) << drafted.log;
  EXPECT_NE(drafted.log.find("speculative decoding: draft model"), std::string::npos) << drafted.log;
  const int64_t n_alone = printed_kv_tokens(alone.log), n_drafted = printed_kv_tokens(drafted.log);
  EXPECT_LT(n_drafted, n_alone / 2 + 16) << alone.log << drafted.log;  // half of what is left after 2 x the weights
  EXPECT_GT(n_drafted, n_alone / 4) << drafted.log;
}

// `kairo plan --draft-model` counts what `kairo serve --draft-model` takes (the draft's weights, and its own KV pool
// of as many token slots as the model's), each on its own line, so the KV tokens it predicts shrink and are the
// ones the server prints for the same flags.
TEST(ServeKvPlan, PlanWithADraftModelPredictsWhatServePrints) {
  const std::string draft = std::string(KAIRO_SHARED_DIR) + "/models/synth-llama-gqa.Q4_0.gguf";
  const std::string budget = "--model " + kSynth + " --mem-gb 0.145 --usable-fraction 1 --context 512 "
                             "--concurrency 64";
  const auto alone = plan_json(budget);
  const auto drafted = plan_json(budget + " --draft-model " + draft);
  ASSERT_TRUE(alone["kv_pool"].contains("n_token_slots")) << alone.dump();
  ASSERT_TRUE(drafted["kv_pool"].contains("n_token_slots")) << drafted.dump();
  const int64_t n_alone = alone["kv_pool"]["n_token_slots"].get<int64_t>();
  const int64_t n_drafted = drafted["kv_pool"]["n_token_slots"].get<int64_t>();
  // The draft stores as much per token as the model (the same shapes): what is left after both weights, halved.
  const auto& m = drafted["memory"];
  const uint64_t per_token = m["kv_bytes_per_token"].get<uint64_t>();
  EXPECT_EQ(drafted["draft_model"]["kv_bytes_per_token"].get<uint64_t>(), per_token);
  const uint64_t draft_weights = m["draft_weights_bytes"].get<uint64_t>();
  EXPECT_GT(draft_weights, 0u);
  EXPECT_LT(draft_weights, m["weights_bytes"].get<uint64_t>());  // Q4_0 beside Q8_0
  const int64_t expected_slots =
      (n_alone * static_cast<int64_t>(per_token) - static_cast<int64_t>(draft_weights)) / static_cast<int64_t>(2 * per_token * 16) * 16;
  EXPECT_LE(std::abs(n_drafted - expected_slots), 16) << n_alone << " " << n_drafted;
  EXPECT_EQ(drafted["kv_pool"]["draft_n_token_slots"].get<int64_t>(), n_drafted);
  EXPECT_EQ(drafted["kv_pool"]["draft_bytes"].get<uint64_t>(), static_cast<uint64_t>(n_drafted) * per_token);
  EXPECT_EQ(m["draft_kv_bytes"].get<uint64_t>(), 64ull * 512 * per_token);  // the requested 64 x 512, as kv_bytes

  const auto serve = start_and_stop_serve("--model " + kSynth + " --mem-budget-gb 0.145 --max-model-len 512 "
                                          "--max-num-seqs 64 --draft-model " + draft);
  ASSERT_TRUE(serve.served()) << serve.log;
  EXPECT_EQ(printed_kv_tokens(serve.log), n_drafted) << serve.log;
  EXPECT_NE(serve.log.find("the draft model's KV: " + std::to_string(n_drafted) + " tokens"), std::string::npos)
      << serve.log;

  const auto human = run_kairo("plan --device cpu --bandwidth-gbs 10 --tflops 1 " + budget + " --draft-model " + draft);
  EXPECT_EQ(human.exit_code, 0) << human.err;
  EXPECT_NE(human.out.find("| draft model weights | "), std::string::npos) << human.out;
  EXPECT_NE(human.out.find("| draft model KV cache | "), std::string::npos) << human.out;
  EXPECT_NE(human.out.find("--draft-model " + draft + " on this budget: KV cache of " + std::to_string(n_drafted) +
                           " tokens"),
            std::string::npos)
      << human.out;
  EXPECT_NE(human.out.find("and the draft model's KV of " + std::to_string(n_drafted) + " tokens"), std::string::npos)
      << human.out;

  // A draft the server would refuse, refused with the engine's words.
  const auto bad = run_kairo("plan --device cpu --bandwidth-gbs 10 --tflops 1 " + budget + " --draft-model " +
                             std::string(KAIRO_SHARED_DIR) + "/models/synth-llama3.Q8_0.gguf");
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("the draft model's vocabulary has"), std::string::npos) << bad.err;
}

TEST(ServeKvPlan, TooSmallKvCacheMemoryIsRefusedWithThePlannersMessage) {
  // 0.2 MiB holds 25 blocks of 16 tokens × 512 B; one sequence of 512 tokens needs 32.
  const auto r = run_kairo("serve --port 0 --model " + kSynth + " --max-model-len 512 --kv-cache-memory 0.2");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("\nerror: context 512 × concurrency 1 needs 256.0 KiB of KV cache but the KV cache budget is "
                       "204.8 KiB; lower --max-model-len to 400, or use --kv-dtype q8_0 (136.0 KiB of KV cache), or "
                       "raise --kv-cache-memory to at least 256.0 KiB\n"),
            std::string::npos)
      << r.err;
  // The suggested values start.
  const std::pair<std::string, int64_t> fixes[] = {
      {"--max-model-len 400 --kv-cache-memory 0.2", 400},             // 25 blocks of 512 B × 16
      {"--max-model-len 512 --kv-cache-memory 0.2 --kv-dtype q8_0", 768},  // 48 blocks of 272 B × 16
      {"--max-model-len 512 --kv-cache-memory 0.25", 512},
  };
  for (const auto& [fix, tokens] : fixes) {
    const std::string args = "--model " + kSynth + " " + fix;
    const auto s = start_and_stop_serve(args);
    EXPECT_TRUE(s.served()) << args << "\n" << s.log;
    EXPECT_EQ(printed_kv_tokens(s.log), tokens) << args << "\n" << s.log;
  }
}

// A memory budget smaller than weights + activations + overhead: the server's refusal is `kairo plan`'s text for the
// same inputs, with the server's flag names.
TEST(ServeKvPlan, TooSmallMemoryBudgetIsRefusedWithPlansText) {
  const auto plan = plan_json("--model " + kSynth + " --mem-gb 0.13 --usable-fraction 1 --context 512 "
                              "--concurrency 64");
  ASSERT_TRUE(plan["kv_pool"].contains("error")) << plan.dump();
  std::string want = plan["kv_pool"]["error"].get<std::string>();
  EXPECT_NE(want.find("leaving nothing for the KV cache; raise --mem-gb to at least"), std::string::npos) << want;
  want = std::regex_replace(want, std::regex("--mem-gb"), "--mem-budget-gb");
  const auto r = run_kairo("serve --port 0 --model " + kSynth + " --mem-budget-gb 0.13 --max-model-len 512");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("\nerror: " + want + "\n"), std::string::npos) << r.err << "\nwant: " << want;
}

TEST(ServeKvPlan, BadKvFlagsAreMessages) {
  const std::pair<std::string, std::string> cases[] = {
      {"--max-model-len 513", "--max-model-len 513 is larger than the model's context length of 512 tokens"},
      {"--kv-dtype q4_0", "--kv-dtype \"q4_0\" is not supported"},
      {"--kv-cache-memory 1 --mem-budget-gb 1", "give --kv-cache-memory (the KV cache alone) or --mem-budget-gb"},
  };
  for (const auto& [args, want] : cases) {
    const auto r = run_kairo("serve --port 0 --model " + kSynth + " " + args);
    EXPECT_EQ(r.exit_code, 1) << args;
    EXPECT_NE(r.err.find(want), std::string::npos) << args << ": " << r.err;
  }
}

}  // namespace
}  // namespace kairo
