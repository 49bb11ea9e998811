// `kairo serve --lora` refusals at startup: more adapters than --max-loras, and a file the loader refuses (its message,
// naming the file). Serving with adapters is tested over HTTP in tests/server/lora_*_test.cpp and end to end with the
// openai client in tests/e2e/openai_e2e.test.mjs.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <nlohmann/json.hpp>

#include "run_command.h"
#include "serve_startup.h"
#include "test_paths.h"

namespace kairo {
namespace {

using testing::run_kairo;

using kairo::testing::demo_model_path;

TEST(ServeLora, MoreAdaptersThanMaxLorasAreRefused) {
  auto r = run_kairo("serve --port 0 --model " + demo_model_path() + " --lora a=" + demo_model_path() +
                     " --lora b=" + demo_model_path() + " --max-loras 1");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("error: --lora gives 2 adapters but --max-loras is 1; raise --max-loras"), std::string::npos)
      << r.err;
}

TEST(ServeLora, AFileThatIsNoAdapterIsRefusedWithTheLoadersMessage) {
  auto r = run_kairo("serve --port 0 --model " + demo_model_path() + " --lora a=" + demo_model_path());
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find(demo_model_path() + ": general.type is missing: this is not a LoRA adapter file"),
            std::string::npos)
      << r.err;
}

// `kairo plan --lora` and `kairo serve --lora` count the adapters' device bytes (and, with --max-loras beyond the
// --lora ones / --allow-runtime-lora, the runtime slots) before the KV cache: the KV blocks a fixed budget leaves
// shrink by exactly those bytes, and the server prints the plan's numbers, the adapter memory next to the weights.
TEST(ServeLora, AdapterMemoryComesOutOfTheKvBudget) {
  const std::string adapter =
      ::testing::TempDir() + "/kairo_serve_lora_memory_" + std::to_string(::getpid()) + ".gguf";
  const auto synth = run_kairo("lora synth " + demo_model_path() + " " + adapter + " --rank 8");
  ASSERT_EQ(synth.exit_code, 0) << synth.err;
  // 0.135 GiB (128 MiB of it the CPU's runtime overhead) binds long before 4096 sequences of the demo's 128 tokens.
  const std::string budget =
      "--model " + demo_model_path() + " --context 128 --concurrency 4096 --mem-gb 0.135 --usable-fraction 1";
  auto plan = [&](const std::string& extra) {
    const auto r = run_kairo("plan --device cpu --bandwidth-gbs 10 --tflops 1 --json " + budget + extra);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.exit_code == 0 ? nlohmann::json::parse(r.out) : nlohmann::json::object();
  };
  const auto alone = plan("");
  const auto loaded = plan(" --lora " + adapter);
  const auto runtime = plan(" --lora " + adapter + " --max-loras 4 --max-lora-rank 8");
  for (const auto* p : {&alone, &loaded, &runtime}) ASSERT_TRUE((*p)["kv_pool"].contains("n_blocks")) << p->dump();
  // The KV pool is what the budget leaves after weights, activations, overhead and the adapters, in whole blocks.
  auto expected_blocks = [](const nlohmann::json& p) {
    const auto& m = p["memory"];
    const uint64_t fixed = m["weights_bytes"].get<uint64_t>() + m["activation_bytes"].get<uint64_t>() +
                           m["overhead_bytes"].get<uint64_t>() + m.value("adapter_bytes", uint64_t{0});
    return static_cast<int64_t>((m["usable_bytes"].get<uint64_t>() - fixed) /
                                (16 * m["kv_bytes_per_token"].get<uint64_t>()));
  };
  EXPECT_FALSE(alone["memory"].contains("adapter_bytes"));
  const auto& one = loaded["adapters"];
  EXPECT_EQ(one["n_loaded"], 1);
  EXPECT_EQ(one["n_runtime_slots"], 0);
  EXPECT_GT(one["loaded_bytes"].get<uint64_t>(), 0u);
  EXPECT_EQ(loaded["memory"]["adapter_bytes"].get<uint64_t>(),
            one["loaded_bytes"].get<uint64_t>() + one["scratch_bytes"].get<uint64_t>());
  const auto& slots = runtime["adapters"];
  EXPECT_EQ(slots["n_runtime_slots"], 3);
  EXPECT_EQ(slots["runtime_slot_rank"], 8);
  // `kairo lora synth` adapts every projection in F16, as a runtime slot of the same rank is counted.
  EXPECT_EQ(slots["runtime_slot_bytes"], one["loaded_bytes"]);
  int64_t last = alone["kv_pool"]["n_blocks"].get<int64_t>() + 1;
  for (const auto* p : {&alone, &loaded, &runtime}) {
    EXPECT_EQ((*p)["kv_pool"]["n_blocks"].get<int64_t>(), expected_blocks(*p)) << p->dump();
    EXPECT_LT((*p)["kv_pool"]["n_blocks"].get<int64_t>(), last);
    last = (*p)["kv_pool"]["n_blocks"].get<int64_t>();
  }

  const std::string serve_budget =
      "--model " + demo_model_path() + " --mem-budget-gb 0.135 --max-model-len 128 --max-num-seqs 4096";
  const auto served = testing::start_and_stop_serve(serve_budget + " --lora a=" + adapter +
                                                    " --allow-runtime-lora --max-loras 4 --max-lora-rank 8");
  ASSERT_TRUE(served.served()) << served.log;
  EXPECT_EQ(testing::printed_kv_tokens(served.log), runtime["kv_pool"]["n_token_slots"].get<int64_t>()) << served.log;
  EXPECT_NE(served.log.find(", LoRA adapters "), std::string::npos) << served.log;
  EXPECT_NE(served.log.find("1 adapter "), std::string::npos) << served.log;
  EXPECT_NE(served.log.find(" + 3 runtime slots of rank 8 × "), std::string::npos) << served.log;

  const auto human = run_kairo("plan --device cpu --bandwidth-gbs 10 --tflops 1 " + budget + " --lora " + adapter);
  EXPECT_EQ(human.exit_code, 0) << human.err;
  EXPECT_NE(human.out.find("| LoRA adapters | "), std::string::npos) << human.out;
  std::remove(adapter.c_str());
}

// A budget the runtime slots eat up is refused naming them and the flags that size them (without them it serves: the
// test above).
TEST(ServeLora, RuntimeSlotsThatLeaveNoRoomAreRefusedNamingTheFlags) {
  auto r = run_kairo("serve --port 0 --model " + demo_model_path() +
                     " --mem-budget-gb 0.135 --allow-runtime-lora --max-loras 64 "
                     "--max-lora-rank 1024");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("LoRA adapters ("), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("lower --max-loras or --max-lora-rank (64 runtime LoRA slots of rank 1024 reserve "),
            std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace kairo
