// The CUDA device as the device under test of the conformance suite (tests/device_ops).
#include "device_ops/device_ops_util.h"
#include "kernels/cuda/cuda_device.h"

namespace kairo::kernels::device_ops::testing {

std::shared_ptr<Device> open_device_under_test() {
  auto d = cuda::open_device(0);
  EXPECT_TRUE(d.ok()) << (d.ok() ? "" : d.error().message);
  return d.ok() ? *d : nullptr;
}

std::vector<DType> device_weight_types() {
  return {DType::F32, DType::F16, DType::BF16, DType::Q8_0, DType::Q4_0, DType::Q4_K, DType::Q5_K, DType::Q6_K};
}

}  // namespace kairo::kernels::device_ops::testing
