// A device with memory of its own refuses a model whose weights do not fit before copying anything, with the sizes
// and what to change.
#include <gtest/gtest.h>

#include "fake_device.h"
#include "model/model.h"
#include "test_paths.h"

namespace kairo::model {
namespace {

TEST(WeightsFit, AModelLargerThanTheDeviceIsRefusedWithWhatToChange) {
  auto device = std::make_shared<testing::FakeGpuDevice>();
  device->memory_bytes = 1 << 20;  // 1 MiB, 512 KiB free; the file's weights are ~1.5 MB
  auto m = Model::load(kairo::testing::shared_path("models/synth-llama-gqa.Q8_0.gguf"), device);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.error().message.find("but fake-gpu has 512.00 KiB free: pick a smaller quantization"),
            std::string::npos)
      << m.error().message;
  EXPECT_NE(m.error().message.find("--device cpu"), std::string::npos);
}

TEST(WeightsFit, AModelThatFitsLoads) {
  auto device = std::make_shared<testing::FakeGpuDevice>();
  device->memory_bytes = 64ull << 20;
  auto m = Model::load(kairo::testing::shared_path("models/synth-llama-gqa.Q8_0.gguf"), device);
  EXPECT_TRUE(m.ok()) << m.error().message;
}

}  // namespace
}  // namespace kairo::model
