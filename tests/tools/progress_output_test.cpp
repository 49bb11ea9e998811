// Progress bars and --quiet as a user sees them: a bar on a terminal, nothing on a pipe or under --quiet, and the
// results on stdout either way.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "pty_process.h"
#include "run_command.h"

namespace {

using kairo::testing::PtyProcess;
using kairo::testing::run_kairo;

std::string out_path(const char* name) {
  return ::testing::TempDir() + "/progress_" + name + "." + std::to_string(::getpid()) + ".gguf";
}

// A model that takes about half a second to write here: long enough for the bar to redraw with a rate and an ETA.
std::vector<std::string> synth_args(const std::string& out) {
  return {"synth", out, "--arch", "llama", "--dim", "1024", "--layers", "4", "--heads", "16",
          "--ffn", "2816", "--vocab", "8000", "--type", "Q4_0", "--tokenizer-from", "none"};
}

// A tiny one, for the tests that only look at what is printed.
const char* kTinySynth =
    " --arch llama --dim 256 --layers 2 --heads 4 --ffn 512 --vocab 1000 --type Q4_0 --tokenizer-from none";

TEST(ProgressOutput, ATerminalGetsABarWithRateAndEta) {
  const std::string out = out_path("tty");
  PtyProcess synth(synth_args(out), {"TERM=xterm"});
  ASSERT_TRUE(synth.started());
  ASSERT_TRUE(synth.wait_for("\rsynth tensors [", 60)) << synth.output();
  EXPECT_TRUE(synth.wait_for("ETA ", 60)) << synth.output();
  EXPECT_TRUE(synth.wait_for("\r\x1b[K", 60)) << "the bar's line is cleared before the summary: " << synth.output();
  EXPECT_TRUE(synth.wait_for("wrote " + out, 60)) << synth.output();
  EXPECT_EQ(synth.wait_exit(60), 0) << synth.output();
  std::remove(out.c_str());
}

TEST(ProgressOutput, QuietOnATerminalDrawsNoBar) {
  for (const char* where : {"before", "after"}) {
    const std::string out = out_path(where);
    std::vector<std::string> args = {"synth", out, "--arch", "llama", "--dim", "256", "--layers", "2", "--heads", "4",
                                     "--ffn", "512", "--vocab", "1000", "--tokenizer-from", "none"};
    if (std::string(where) == "before") {
      args.insert(args.begin(), "--quiet");
    } else {
      args.push_back("-q");
    }
    PtyProcess synth(args, {"TERM=xterm"});
    ASSERT_TRUE(synth.started());
    EXPECT_EQ(synth.wait_exit(60), 0) << synth.output();
    EXPECT_EQ(synth.output().find("synth tensors"), std::string::npos) << where << ": " << synth.output();
    EXPECT_NE(synth.output().find("wrote " + out), std::string::npos) << "results still print: " << synth.output();
    std::remove(out.c_str());
  }
}

TEST(ProgressOutput, APipeGetsNoProgressLines) {
  const std::string out = out_path("pipe");
  const auto r = run_kairo("synth " + out + kTinySynth);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "") << "no per-tensor lines or carriage returns in logs";
  EXPECT_NE(r.out.find("wrote " + out), std::string::npos) << r.out;
  std::remove(out.c_str());
}

}  // namespace
