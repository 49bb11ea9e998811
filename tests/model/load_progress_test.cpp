// Model::load reports the bytes of weights it has moved to the device (what `kairo`'s load progress bar shows).
#include <gtest/gtest.h>

#include <vector>

#include "kernels/device.h"
#include "model/model.h"
#include "test_paths.h"

namespace kairo::model {
namespace {

TEST(LoadProgress, ReportsBytesOnTheDeviceUpToTheTotal) {
  std::vector<std::pair<uint64_t, uint64_t>> calls;
  auto m = Model::load(kairo::testing::shared_path("models/synth-llama-gqa.Q8_0.gguf"), kernels::make_cpu_device(),
                       [&](uint64_t done, uint64_t total) { calls.emplace_back(done, total); });
  ASSERT_TRUE(m.ok()) << m.error().message;
  ASSERT_FALSE(calls.empty());
  const uint64_t total = calls.front().second;
  uint64_t previous = 0;
  for (const auto& [done, t] : calls) {
    EXPECT_EQ(t, total) << "one total for the whole load";
    EXPECT_GT(done, previous) << "every report is further on";
    previous = done;
  }
  EXPECT_EQ(calls.back().first, total) << "the last report is the whole";
  // The matrices the device gets: every weight matrix of the file but the embedding table, which a host-memory
  // device reads in place (and which this file does not tie to the output).
  uint64_t matrices = 0;
  for (const auto& t : (*m)->file().tensors())
    if (t.dims.size() >= 2 && t.name != "token_embd.weight") matrices += t.n_bytes;
  EXPECT_EQ(total, matrices);
}

}  // namespace
}  // namespace kairo::model
