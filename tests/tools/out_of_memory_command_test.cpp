// `kairo run` and `kairo bench` under an address-space limit (`ulimit -v`) that the model fits but what the command
// allocates next does not: an error that says what ran out and what to change, exit code 1, never std::terminate.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>

#include "address_space_cap.h"
#include "run_command.h"
#include "test_paths.h"

namespace kairo {
namespace {

using testing::run_kairo;

// 1 GiB: far above what loading the small models below maps, far below what their KV cache or step buffers need.
const std::string kCap = "ulimit -v 1048576; ";

class OutOfMemoryCommands : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const std::string tok = " --tokenizer-from " + kairo::testing::demo_model_path();
    const std::string id = std::to_string(::getpid());
    // 19 MB of weights, but a 65,536-token prefill needs gigabytes of activations.
    wide_ = ::testing::TempDir() + "/kairo_oom_wide_" + id + ".gguf";
    auto r = run_kairo("synth " + wide_ + " --dim 1024 --layers 1 --heads 8 --kv-heads 8 --ffn 4096 --vocab 512"
                       " --context 65536 --type Q8_0" + tok);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    // Under 1 MB of weights, but a context of 2^24 tokens: `kairo run`'s KV cache for it is 8 GiB.
    long_ = ::testing::TempDir() + "/kairo_oom_long_" + id + ".gguf";
    r = run_kairo("synth " + long_ + " --dim 128 --layers 2 --heads 4 --kv-heads 2 --ffn 256 --vocab 512"
                  " --context 16777216 --type Q8_0" + tok);
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  static void TearDownTestSuite() {
    std::remove(wide_.c_str());
    std::remove(long_.c_str());
  }
  void SetUp() override {
    if (!kairo::testing::kAddressSpaceCapWorks) GTEST_SKIP() << "ulimit -v says nothing under sanitizers or qemu";
  }
  static std::string wide_, long_;
};
std::string OutOfMemoryCommands::wide_, OutOfMemoryCommands::long_;

void expect_no_crash(const testing::CommandResult& r) {
  EXPECT_EQ(r.err.find("terminate called"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("std::bad_alloc"), std::string::npos) << r.err;
}

TEST_F(OutOfMemoryCommands, BenchModelSaysWhatRanOutAndWhatToLower) {
  // The finding: a step's buffers that did not fit escaped as an exception (SIGABRT, exit 134).
  const auto r = run_kairo("bench model -m " + wide_ + " --pp 65536 --tg 0 --batch 65536 --reps 1 --threads 1 "
                           "--bandwidth-gbs 10 --int8-tops 1",
                           kCap);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  expect_no_crash(r);
  EXPECT_NE(r.err.find("error: kairo bench model ran out of memory: cannot allocate "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("this process may map at most 1.00 GiB (ulimit -v)"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("; lower --pp, --tg or --batch, or free memory\n"), std::string::npos) << r.err;
}

TEST_F(OutOfMemoryCommands, RunSaysTheKvCacheDoesNotFit) {
  const auto r = run_kairo("run -m " + long_ + " -p hello -n 2 --threads 1", kCap);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  expect_no_crash(r);
  EXPECT_NE(r.err.find("error: the KV cache needs 8.00 GiB but cannot allocate "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("(ulimit -v)"), std::string::npos) << r.err;
}

TEST_F(OutOfMemoryCommands, BenchBatchSaysTheKvCacheDoesNotFit) {
  const auto r = run_kairo("bench batch -m " + wide_ + " --batch 64 --prompt 8192 --gen 1 --max-batched-tokens 512 "
                           "--threads 1",
                           kCap);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  expect_no_crash(r);
  EXPECT_NE(r.err.find("error: the KV cache needs 2.01 GiB but cannot allocate "), std::string::npos) << r.err;
}

TEST_F(OutOfMemoryCommands, TheRunsAboveSucceedWithoutTheCapSoTheCapIsWhatFails) {
  // Small enough to run: the same model and commands, sizes that fit in 1 GiB.
  auto r = run_kairo("bench model -m " + wide_ + " --pp 64 --tg 2 --batch 64 --reps 1 --threads 1 "
                     "--bandwidth-gbs 10 --int8-tops 1",
                     kCap);
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

}  // namespace
}  // namespace kairo
