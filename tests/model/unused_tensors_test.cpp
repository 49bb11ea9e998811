// A model file whose tensors the forward pass would not use (a feature kairo does not implement) is refused by name,
// never run with the tensor silently ignored: every Llama 3.1/3.2 GGUF carries rope_freqs, which is now bound; a
// mixtral-style expert tensor or any other stranger is not.
#include <gtest/gtest.h>

#include "gguf/tiny_model.h"
#include "model/model.h"

namespace kairo::model {
namespace {

Result<std::unique_ptr<Model>> load_bytes(const std::vector<uint8_t>& bytes) {
  KAIRO_TRY_ASSIGN(gguf::File f, gguf::File::parse(bytes.data(), bytes.size(), "tiny.gguf"));
  return Model::from_file(std::move(f));
}

TEST(UnusedTensors, AnExpertTensorTheForwardPassWouldIgnoreIsRefusedByName) {
  gguf::Writer w = gguf::testing::tiny_model_writer();
  w.add_tensor("blk.0.ffn_gate_exps.weight", DType::F32, {8, 16, 2}, gguf::testing::tiny_f32_bytes(256, 0.1f));
  const std::vector<uint8_t> bytes = w.to_bytes();
  auto m = load_bytes(bytes);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().message,
            "tiny.gguf: tensor 'blk.0.ffn_gate_exps.weight' is not used by kairo's llama forward pass (a feature it "
            "does not implement yet); running without it would give wrong outputs, so the model is refused");
}

TEST(UnusedTensors, RopeFreqsIsBoundWithItsShapeChecked) {
  gguf::Writer ok = gguf::testing::tiny_model_writer();
  ok.add_tensor("rope_freqs.weight", DType::F32, {2}, gguf::testing::tiny_f32_bytes(2, 1.0f));  // n_rot / 2 = 2
  const std::vector<uint8_t> good = ok.to_bytes();
  auto m = load_bytes(good);
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_NE((*m)->weights().rope_freq_factors, nullptr);

  gguf::Writer bad = gguf::testing::tiny_model_writer();
  bad.add_tensor("rope_freqs.weight", DType::F32, {3}, gguf::testing::tiny_f32_bytes(3, 1.0f));
  const std::vector<uint8_t> wrong = bad.to_bytes();
  auto refused = load_bytes(wrong);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().message, "tiny.gguf: tensor 'rope_freqs.weight' has shape [3], expected [2]");
}

}  // namespace
}  // namespace kairo::model
