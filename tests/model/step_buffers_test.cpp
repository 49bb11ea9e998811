// StepBuffers grow to the largest step so far; growth the device cannot back is an Error naming the buffer and its
// knob, and leaves no buffer that a later, smaller step would take for allocated.
#include <gtest/gtest.h>

#include "fake_device.h"
#include "model/decoder.h"
#include "model/model.h"
#include "test_paths.h"

namespace kairo::model {
namespace {

// Refuses allocations above `max_bytes`, as a device that has run out.
class ShortDevice : public testing::FakeGpuDevice {
 public:
  uint64_t max_bytes = UINT64_MAX;
  Result<kernels::DeviceSpan> allocate(uint64_t bytes, const char* what) override {
    if (bytes > max_bytes) return Error{std::string("cannot allocate for ") + what};
    return FakeGpuDevice::allocate(bytes, what);
  }
};

TEST(StepBuffers, AFailedGrowthLeavesNothingALaterStepTrusts) {
  auto m = Model::load(kairo::testing::shared_path("models/synth-llama-gqa.Q8_0.gguf"));
  ASSERT_TRUE(m.ok()) << m.error().message;
  const ModelConfig& c = (*m)->config();
  auto device = std::make_shared<ShortDevice>();
  StepBuffers buffers(device);
  ASSERT_TRUE(buffers.reserve(c, 16, 1).ok());

  device->max_bytes = 64 << 10;  // a 1000-token residual stream (1000 x 256 floats) does not fit
  const Status grown = buffers.reserve(c, 1000, 1);
  ASSERT_FALSE(grown.ok());
  EXPECT_EQ(grown.error().message, "cannot allocate for the residual stream (lower --max-num-batched-tokens)");

  device->max_bytes = UINT64_MAX;
  ASSERT_TRUE(buffers.reserve(c, 8, 1).ok());  // smaller than before the failure: must allocate again
  for (kernels::DeviceSpan* s : {&buffers.x, &buffers.xn, &buffers.q, &buffers.k, &buffers.v, &buffers.attn,
                                 &buffers.proj, &buffers.gate, &buffers.up, &buffers.out_x}) {
    EXPECT_FALSE(s->empty());
  }
}

}  // namespace
}  // namespace kairo::model
