// `kairo lora synth` and `kairo lora merge` as a user runs them.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "gguf/gguf_file.h"
#include "run_command.h"
#include "test_paths.h"

namespace kairo {
namespace {

using testing::run_kairo;

std::string temp_path(const std::string& name) { return ::testing::TempDir() + "/kairo_tools_lora_" + name; }

TEST(LoraCommand, SynthThenMergeGivesAModelThatRuns) {
  const std::string base = temp_path("base.gguf"), ad = temp_path("ad.gguf"), out = temp_path("merged.gguf");
  auto r = run_kairo("synth " + base +
                     " --dim 128 --layers 2 --heads 4 --ffn 256 --vocab 512 --context 256 --type "
                     "Q8_0 --tokenizer-from " +
                     kairo::testing::demo_model_path());
  ASSERT_EQ(r.exit_code, 0) << r.err;

  r = run_kairo("lora synth " + base + " " + ad + " --rank 32 --alpha 64 --targets q,k,v,o --type q8_0 --seed 2");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("wrote " + ad + ": rank 32, alpha 64, 8 tensors adapted, 65.5 K parameters"),
            std::string::npos) << r.out;
  auto f = gguf::File::open(ad);
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->find_tensor("blk.1.attn_output.weight.lora_b")->type, DType::Q8_0);

  r = run_kairo("lora merge " + base + " " + ad + " " + out + " --scale 0.5");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("wrote " + out + ": 8 tensors merged (8 Q8_0) at scale 0.5, 13 copied"), std::string::npos)
      << r.out;
  auto run = run_kairo("run --model " + out + " --prompt 'Once' --temperature 0 --max-tokens 4 --json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(nlohmann::json::parse(run.out)["tokens"].size(), 4u);
  for (const auto& p : {base, ad, out}) std::remove(p.c_str());
}

TEST(LoraCommand, UserErrorsSayWhatToChange) {
  auto r = run_kairo("lora synth " + kairo::testing::demo_model_path() + " " + temp_path("x.gguf") +
                     " --rank 8 --targets "
                     "q,qq");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "error: --targets: unknown projection \"qq\"; use a comma-separated list of q, k, v, o, gate, up, "
                   "down\n");
  r = run_kairo("lora synth " + kairo::testing::demo_model_path() + " " + temp_path("x.gguf") +
                " --rank 8 --type q4_0");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "error: --type Q4_0: adapter tensors are f32, f16, bf16 or q8_0\n");
  r = run_kairo("lora merge " + kairo::testing::demo_model_path() + " " + kairo::testing::demo_model_path() + " " +
                temp_path("y.gguf"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "error: " + kairo::testing::demo_model_path() +
                       ": general.type is missing: this is not a LoRA adapter "
                       "file (convert one with llama.cpp's convert_lora_to_gguf.py, or make one with `kairo lora "
                       "synth`)\n");
  r = run_kairo("lora");
  EXPECT_NE(r.exit_code, 0);
}

}  // namespace
}  // namespace kairo
