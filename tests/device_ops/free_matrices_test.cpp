// Device::free_matrices gives back what upload_matrices took (an unloaded LoRA adapter's A and B): 10 upload/free
// cycles leave the device's bytes_in_use where they started, and a matrix uploaded after a free (into storage or a
// slot the free gave back) computes with its own weights.
#include <random>

#include "device_ops/device_ops_util.h"
#include "kernels/kernel_test_util.h"
#include "kernels/ref/ref_ops.h"

namespace kairo::kernels::device_ops {
namespace {

using kernels::testing::random_floats;
using kernels::testing::random_weight;

TEST(DeviceMemory, FreedMatricesGiveTheirBytesBack) {
  KAIRO_TEST_DEVICE(d);
  std::mt19937 rng(7);
  ThreadPool pool(1);
  const uint64_t before = d->bytes_in_use();
  for (int cycle = 0; cycle < 10; ++cycle) {
    // A rank-16 pair as the LoRA loader keeps it: A [16, 256] and B [96, 16] in F16.
    auto a = random_weight(rng, DType::F16, 16, 256);
    auto b = random_weight(rng, DType::F16, 96, 16);
    const MatrixView views[] = {a.view, b.view};
    auto uploaded = d->upload_matrices(views);
    ASSERT_TRUE(uploaded.ok()) << uploaded.error().message;
    EXPECT_GE(d->bytes_in_use(), before + 16 * 256 * 2 + 96 * 16 * 2) << "cycle " << cycle;

    const std::vector<float> x = random_floats(rng, 256);
    std::vector<float> ref(16);
    ref::matmul(a.view, x.data(), ref.data(), 1, pool);
    DeviceSpan xs = testing::to_device(*d, x);
    DeviceSpan ys = testing::zeros(*d, 16 * sizeof(float));
    d->begin_step(pool);
    d->matmul(&(*uploaded)[0], 1, xs, &ys, 1, Numerics::Exact);
    d->end_step();
    EXPECT_LT(testing::rel_error(testing::from_device<float>(*d, ys, 16), ref), 1e-4) << "cycle " << cycle;
    d->free(xs);
    d->free(ys);

    d->free_matrices(*uploaded);
    EXPECT_EQ(d->bytes_in_use(), before) << "cycle " << cycle;
  }
}

}  // namespace
}  // namespace kairo::kernels::device_ops
