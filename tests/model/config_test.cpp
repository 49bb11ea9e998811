// Mixture-of-experts metadata read from a qwen3moe file, and the shape line `kairo inspect` and `kairo plan` print.
#include "model/config.h"

#include <gtest/gtest.h>

#include "test_paths.h"

namespace kairo::model {
namespace {

TEST(Config, Qwen3moeReadsItsExpertsAndQkNorm) {
  auto f = gguf::File::open(kairo::testing::shared_path("models/synth-qwen3moe.Q8_0.gguf"));
  ASSERT_TRUE(f.ok()) << f.error().message;
  auto c = read_config(*f);
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_TRUE(c->moe());
  EXPECT_EQ(c->n_experts, 8);
  EXPECT_EQ(c->n_experts_used, 2);
  EXPECT_EQ(c->expert_ffn_dim, 64);
  EXPECT_TRUE(c->qk_norm);
  EXPECT_EQ(c->rope.style, kernels::RopeStyle::Neox);
  EXPECT_EQ(describe_shape(*c),
            "2 layers, dim 256, 4 heads (2 KV, head dim 64), ffn 768, 8 experts (2 used, width 64), vocab 1024, "
            "context 40960, rope NEOX base 1e+06, Q/K norm");
}

TEST(Config, DenseFilesHaveNoExperts) {
  auto f = gguf::File::open(kairo::testing::shared_path("models/synth-qwen3.Q8_0.gguf"));
  ASSERT_TRUE(f.ok()) << f.error().message;
  auto c = read_config(*f);
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_FALSE(c->moe());
  EXPECT_EQ(describe_shape(*c).find("experts"), std::string::npos);
}

}  // namespace
}  // namespace kairo::model
