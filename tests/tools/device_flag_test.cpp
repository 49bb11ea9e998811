// --device on the commands a user types, and `kairo devices`: the Vulkan device (lavapipe in CI, with the validation
// layer on) gives the CPU's greedy text on the demo model, its figures come out in hardware terms, and a device that
// is not there is a one-line error that says what is.
#include <gtest/gtest.h>

#include <cstdlib>
#include <nlohmann/json.hpp>

#include "run_command.h"
#include "test_paths.h"

namespace kairo {
namespace {

using nlohmann::json;
using testing::run_kairo;

TEST(DeviceFlag, AnUnknownDeviceIsRefusedWithTheChoices) {
  const auto r = run_kairo("run --model " + kairo::testing::demo_model_path() + " --prompt hi --device gpu");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("--device 'gpu' is not a device: use cpu, vulkan[:N] or cuda[:N]"), std::string::npos)
      << r.err;
}

TEST(DeviceFlag, DevicesJsonListsTheCpu) {
  const auto r = run_kairo("devices --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j["cpu"]["device"], "cpu");
  EXPECT_GT(j["cpu"]["memory_total_bytes"].get<uint64_t>(), 0u);
}

#ifdef KAIRO_TOOLS_HAVE_VULKAN
class VulkanCommands : public ::testing::Test {
 protected:
  void SetUp() override { ::setenv("KAIRO_VULKAN_VALIDATION", "1", 1); }
};

TEST_F(VulkanCommands, RunGivesTheCpusGreedyContinuation) {
  const std::string args = "run --model " + kairo::testing::demo_model_path() +
                           " --prompt 'I dream' --temperature 0 --max-tokens 60 --json --device ";
  const auto cpu = run_kairo(args + "cpu");
  const auto vk = run_kairo(args + "vulkan");
  ASSERT_EQ(cpu.exit_code, 0) << cpu.err;
  ASSERT_EQ(vk.exit_code, 0) << vk.err;
  EXPECT_EQ(json::parse(vk.out)["tokens"], json::parse(cpu.out)["tokens"]);
  EXPECT_EQ(json::parse(vk.out)["text"], json::parse(cpu.out)["text"]);
}

TEST_F(VulkanCommands, AMissingDeviceIndexNamesTheDevicesFound) {
  const auto r = run_kairo("run --model " + kairo::testing::demo_model_path() + " --prompt hi --device vulkan:7");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("there is no Vulkan device 7; found vulkan:0 ("), std::string::npos) << r.err;
}

TEST_F(VulkanCommands, BenchModelReportsDecodeAgainstTheDevicesReadBandwidth) {
  const auto r = run_kairo("bench model --device vulkan --model " +
                           kairo::testing::shared_path("models/synth-llama-gqa.Q8_0.gguf") +
                           " --pp 16 --tg 4 --reps 1 --roofline-buffer-mb 64 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_NE(j["backend"].get<std::string>().find("vulkan:0"), std::string::npos);
  EXPECT_EQ(j["read_gbs_source"], "measured");
  EXPECT_GT(j["read_gbs"].get<double>(), 0.0);
  bool saw_decode = false;
  for (const auto& t : j["tests"]) {
    if (t["n_gen"].get<int>() == 0) continue;
    saw_decode = true;
    EXPECT_GT(t["gbs"].get<double>(), 0.0);
    EXPECT_GT(t["pct_of_read_bandwidth"].get<double>(), 0.0);
  }
  EXPECT_TRUE(saw_decode);
}

TEST_F(VulkanCommands, RooflineAndPlanMeasureTheDevice) {
  const auto roof = run_kairo("bench roofline --device vulkan --buffer-mb 64 --json");
  ASSERT_EQ(roof.exit_code, 0) << roof.err;
  EXPECT_GT(json::parse(roof.out)["read_gbs"].get<double>(), 0.0);
  const auto plan = run_kairo("plan --device vulkan --model " + kairo::testing::demo_model_path() + " --json");
  ASSERT_EQ(plan.exit_code, 0) << plan.err;
  const json p = json::parse(plan.out);
  EXPECT_GT(p["device"]["memory_bytes"].get<uint64_t>(), 0u);
  EXPECT_GT(p["device"]["bandwidth_gbs"].get<double>(), 0.0);
}

TEST_F(VulkanCommands, DevicesJsonListsVulkanWithItsLimits) {
  const auto r = run_kairo("devices --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json j = json::parse(r.out);
  ASSERT_FALSE(j["vulkan"]["devices"].empty()) << r.out;
  EXPECT_GT(j["vulkan"]["devices"][0]["max_storage_buffer_range"].get<uint64_t>(), 0u);
}
#endif

}  // namespace
}  // namespace kairo
