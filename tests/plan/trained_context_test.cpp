// check_trained_context on real GGUF headers: a context within the model's passes quietly; one beyond it is
// reported with the model's rope scaling and the knob to turn.
#include <gtest/gtest.h>

#include "gguf/gguf_file.h"
#include "model/config.h"
#include "plan/trained_context.h"

namespace kairo::plan {
namespace {

struct Header {
  model::ModelConfig config;
  std::vector<TensorSpec> tensors;
};

Header read_header(const std::string& name) {
  auto file = gguf::File::open(std::string(KAIRO_SHARED_DIR) + "/models/" + name);
  EXPECT_TRUE(file.ok()) << name;
  auto config = model::read_config(*file);
  EXPECT_TRUE(config.ok()) << name;
  return {*config, tensors_from_file(*file)};
}

TEST(TrainedContext, WithinTheModelsContextFits) {
  const auto h = read_header("synth-llama-gqa.Q8_0.gguf");  // llama.context_length 512
  const TrainedContext t = check_trained_context(h.config, h.tensors, 512, "--context");
  EXPECT_TRUE(t.fits);
  EXPECT_EQ(t.trained, 512);
  EXPECT_EQ(t.rope_scaling, "none");
  EXPECT_EQ(t.advice, "");
}

TEST(TrainedContext, BeyondItSaysWhatHappensAndWhatToChange) {
  const auto h = read_header("synth-llama-gqa.Q8_0.gguf");
  const TrainedContext t = check_trained_context(h.config, h.tensors, 2048, "--context");
  EXPECT_FALSE(t.fits);
  EXPECT_EQ(t.requested, 2048);
  EXPECT_EQ(t.advice,
            "--context 2048 is beyond the model's trained context of 512 tokens (llama.context_length): positions "
            "past 512 are ones the model never saw in training, so its output degrades there, whatever the memory. "
            "The model has no rope scaling to stretch its positions. `kairo serve` refuses --max-model-len above "
            "512. Lower --context to 512 or less, or use a model made for 2048 tokens (trained for them, or a GGUF "
            "whose rope scaling and context_length reach them).");
}

TEST(TrainedContext, NamesTheModelsRopeScaling) {
  // gpt-oss: YaRN, factor 32 over an original 4096 = its 131072.
  const auto yarn = read_header("synth-gpt-oss.Q8_0.gguf");
  const TrainedContext t = check_trained_context(yarn.config, yarn.tensors, 262144, "--max-model-len");
  EXPECT_FALSE(t.fits);
  EXPECT_EQ(t.rope_scaling, "YaRN from an original context of 4096");
  EXPECT_NE(t.advice.find("Its rope scaling (YaRN from an original context of 4096) is applied as the GGUF states it; "
                          "kairo does not stretch it further."),
            std::string::npos)
      << t.advice;
  EXPECT_NE(t.advice.find("Lower --max-model-len to 131072 or less"), std::string::npos) << t.advice;
  // llama-3.1-style frequency factors live in a tensor, not in the metadata.
  const auto llama3 = read_header("synth-llama3.Q8_0.gguf");
  EXPECT_EQ(describe_rope_scaling(llama3.config, llama3.tensors), "llama-3 frequency factors (rope_freqs)");
}

}  // namespace
}  // namespace kairo::plan
