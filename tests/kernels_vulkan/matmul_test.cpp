// The Vulkan device's own matmul cases: weights over one bindable buffer (stored as pieces) and the byte-storage
// shader variants against the portable ones. (Every weight type against the reference, and the batch-invariance
// contract, are in tests/device_ops, which every non-CPU device passes.)
#include <cstdlib>
#include <random>

#include "kernels/kernel_test_util.h"
#include "kernels/ref/ref_ops.h"
#include "kernels/vulkan/vk_device_impl.h"
#include "vk_test_util.h"

namespace kairo::kernels::vulkan {
namespace {

using kernels::testing::random_floats;
using kernels::testing::random_weight;
using testing::from_device;
using testing::rel_error;
using testing::to_device;

const DType kAllTypes[] = {DType::F32,  DType::F16,  DType::BF16, DType::Q8_0, DType::Q4_0, DType::Q4_1,
                           DType::Q5_0, DType::Q5_1, DType::Q4_K, DType::Q5_K, DType::Q6_K, DType::MXFP4};

bool is_k_quant(DType t) { return t == DType::Q4_K || t == DType::Q5_K || t == DType::Q6_K; }

DeviceMatrix upload_one(Device& d, const MatrixView& v) {
  auto m = d.upload_matrices(std::span<const MatrixView>(&v, 1));
  EXPECT_TRUE(m.ok()) << (m.ok() ? "" : m.error().message);
  EXPECT_EQ((*m)[0].view.data, nullptr);
  return (*m)[0];
}

std::vector<float> device_matmul(Device& d, const DeviceMatrix& w, const std::vector<float>& x, int64_t n_tokens) {
  DeviceSpan xs = to_device(d, x);
  DeviceSpan ys = testing::zeros(d, static_cast<size_t>(n_tokens * w.view.n_rows) * 4);
  d.matmul(&w, 1, xs, &ys, n_tokens, Numerics::Exact);
  std::vector<float> y = from_device<float>(d, ys, static_cast<size_t>(n_tokens * w.view.n_rows));
  d.free(xs);
  d.free(ys);
  return y;
}

// A weight beyond maxStorageBufferRange (128 MiB on lavapipe): stored as several pieces, one dispatch each.
TEST(VulkanMatmulLarge, WeightOverOneBufferIsSplitIntoPieces) {
  KAIRO_VK_DEVICE(d);
  const int64_t rows = 9000, cols = 4096;  // 147 MB of F32
  const uint64_t bytes = static_cast<uint64_t>(rows * cols) * 4;
  ASSERT_GT(bytes, d->max_allocation_bytes()) << "the test must exceed one buffer on this device";
  std::mt19937 rng(5);
  std::vector<float> wdata(static_cast<size_t>(rows * cols));
  std::normal_distribution<float> dist(0.0f, 1.0f);
  for (int64_t r = 0; r < rows; ++r) {  // cheap rows: a random value per row and a fixed pattern
    const float a = dist(rng);
    for (int64_t c = 0; c < cols; ++c) wdata[static_cast<size_t>(r * cols + c)] = a * static_cast<float>((c * 7 + r) % 13 - 6);
  }
  const MatrixView view{DType::F32, wdata.data(), rows, cols, static_cast<size_t>(cols) * 4};
  const DeviceMatrix dm = upload_one(*d, view);
  const std::vector<float> x = random_floats(rng, static_cast<size_t>(2 * cols));
  const std::vector<float> got = device_matmul(*d, dm, x, 2);

  DeviceSpan ids = to_device(*d, std::vector<int32_t>{0, 8999, 4500});
  DeviceSpan rows_out = testing::zeros(*d, 3 * cols * 4);
  d->get_rows(dm, ids, 3, rows_out);
  const std::vector<float> got_rows = from_device<float>(*d, rows_out, static_cast<size_t>(3 * cols));
  EXPECT_TRUE(std::equal(got_rows.begin(), got_rows.begin() + cols, wdata.begin()));
  EXPECT_TRUE(std::equal(got_rows.begin() + cols, got_rows.begin() + 2 * cols, wdata.begin() + 8999 * cols));

  for (int64_t r : {int64_t{0}, int64_t{1}, int64_t{4000}, rows / 2, rows - 2, rows - 1}) {
    for (int64_t t = 0; t < 2; ++t) {
      double ref = 0, mag = 0;
      for (int64_t c = 0; c < cols; ++c) {
        ref += static_cast<double>(wdata[static_cast<size_t>(r * cols + c)]) * x[static_cast<size_t>(t * cols + c)];
        mag += std::fabs(static_cast<double>(wdata[static_cast<size_t>(r * cols + c)]) * x[static_cast<size_t>(t * cols + c)]);
      }
      EXPECT_NEAR(got[static_cast<size_t>(t * rows + r)], ref, 1e-5 * mag) << "row " << r << " token " << t;
    }
  }
  d->free(ids);
  d->free(rows_out);
}

}  // namespace
}  // namespace kairo::kernels::vulkan

namespace kairo::kernels::vulkan {
namespace {

// Devices with 8/16-bit storage read weight bytes directly (the _s8 shader variants); others shift them out of
// 32-bit words. Both must give the same bits for every type, so the variant a device picks never changes outputs.
TEST(VulkanShaderVariants, ByteStorageAndPortableShadersAgreeBitForBit) {
  KAIRO_VK_DEVICE(d);
  ASSERT_TRUE(static_cast<VulkanDevice&>(*d).context().byte_storage)
      << "lavapipe has 8/16-bit storage: the byte-load variants should be chosen";
  ::setenv("KAIRO_VULKAN_PORTABLE_SHADERS", "1", 1);
  auto portable = open_device(0);
  ::unsetenv("KAIRO_VULKAN_PORTABLE_SHADERS");
  ASSERT_TRUE(portable.ok()) << portable.error().message;
  ASSERT_FALSE(static_cast<VulkanDevice&>(**portable).context().byte_storage);
  std::mt19937 rng(11);
  for (DType type : kAllTypes) {
    const int64_t n_cols = is_k_quant(type) ? 512 : 160;
    auto w = random_weight(rng, type, 41, n_cols);
    const DeviceMatrix a = upload_one(*d, w.view);
    const DeviceMatrix b = upload_one(**portable, w.view);
    const std::vector<float> x = random_floats(rng, static_cast<size_t>(9 * n_cols));
    EXPECT_EQ(device_matmul(*d, a, x, 9), device_matmul(**portable, b, x, 9)) << dtype_name(type);
    const std::vector<int32_t> ids = {40, 3, 0};
    std::vector<float> rows[2];
    Device* devs[2] = {d.get(), portable->get()};
    const DeviceMatrix* mats[2] = {&a, &b};
    for (int k = 0; k < 2; ++k) {
      DeviceSpan ids_d = to_device(*devs[k], ids);
      DeviceSpan out = testing::zeros(*devs[k], ids.size() * n_cols * 4);
      devs[k]->get_rows(*mats[k], ids_d, static_cast<int64_t>(ids.size()), out);
      rows[k] = from_device<float>(*devs[k], out, ids.size() * n_cols);
      devs[k]->free(ids_d);
      devs[k]->free(out);
    }
    EXPECT_EQ(rows[0], rows[1]) << dtype_name(type);
  }
}

}  // namespace
}  // namespace kairo::kernels::vulkan
