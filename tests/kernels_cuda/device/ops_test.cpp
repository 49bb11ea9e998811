// The per-token ops of the CUDA backend against the reference backend.
#include <gtest/gtest.h>

#include <random>

#include "device_test_util.h"
#include "kernels/cuda/cuda_backend.h"
#include "kernels/cuda/cuda_graph.h"
#include "kernels/cuda/cuda_weights.h"
#include "kernels/cuda/ops.h"
#include "kernels/ref/ref_ops.h"

namespace kairo::kernels::cuda {
namespace {

using namespace testing;

const Backend& be() { return cuda_backend(); }

TEST(CudaOps, RmsNormInPlaceAndOutOfPlace) {
  std::mt19937 rng(1);
  const int64_t n = 5, dim = 4096;
  const std::vector<float> x = random_floats(rng, n * dim, 3.0f);
  const std::vector<float> w = random_floats(rng, dim);
  std::vector<float> want(x.size());
  ref::rms_norm(x.data(), w.data(), want.data(), n, dim, 1e-5f);
  DeviceBuffer dx = to_device(x), dw = to_device(w), dy(x.size() * 4);
  be().rms_norm(dx.as<float>(), dw.as<float>(), dy.as<float>(), n, dim, 1e-5f);
  EXPECT_LT(rel_rms(compare(to_host<float>(dy, x.size()), want)), 1e-6);
  be().rms_norm(dx.as<float>(), dw.as<float>(), dx.as<float>(), n, dim, 1e-5f);
  EXPECT_LT(rel_rms(compare(to_host<float>(dx, x.size()), want)), 1e-6);
}

TEST(CudaOps, RopeBothStylesMatchAtLongPositions) {
  std::mt19937 rng(2);
  for (RopeStyle style : {RopeStyle::Normal, RopeStyle::Neox}) {
    RopeParams p;
    p.n_heads = 4;
    p.head_dim = 64;
    p.n_rot = 64;
    p.freq_base = 1e6f;
    p.style = style;
    const std::vector<int32_t> pos = {0, 1, 17, 4095, 32767};
    const int64_t n = static_cast<int64_t>(pos.size());
    std::vector<float> x = random_floats(rng, n * p.n_heads * p.head_dim);
    DeviceBuffer dx = to_device(x), dpos = to_device(pos);
    ref::rope(x.data(), pos.data(), n, p);
    be().rope(dx.as<float>(), dpos.as<int32_t>(), n, p);
    const Diff d = compare(to_host<float>(dx, x.size()), x);
    EXPECT_LT(d.max_abs, 1e-5) << describe(d);
  }
}

TEST(CudaOps, SwigluAddBias) {
  std::mt19937 rng(3);
  const int64_t n_tok = 3, n = 1000;
  const std::vector<float> g = random_floats(rng, n_tok * n, 4.0f), u = random_floats(rng, n_tok * n);
  const std::vector<float> bias = random_floats(rng, n);
  std::vector<float> want(g.size());
  ref::swiglu(g.data(), u.data(), want.data(), n_tok * n);
  ref::add(want.data(), u.data(), n_tok * n);
  ref::add_bias(want.data(), bias.data(), n_tok, n);
  DeviceBuffer dg = to_device(g), du = to_device(u), db = to_device(bias);
  be().swiglu(dg.as<float>(), du.as<float>(), dg.as<float>(), n_tok * n);
  be().add(dg.as<float>(), du.as<float>(), n_tok * n);
  be().add_bias(dg.as<float>(), db.as<float>(), n_tok, n);
  EXPECT_LT(compare(to_host<float>(dg, g.size()), want).max_abs, 1e-5);
}

TEST(CudaOps, GegluMatchesReference) {
  std::mt19937 rng(5);
  const int64_t n = 3000;
  const std::vector<float> g = random_floats(rng, n, 4.0f), u = random_floats(rng, n);
  std::vector<float> want(g.size());
  ref::geglu(g.data(), u.data(), want.data(), n);
  DeviceBuffer dg = to_device(g), du = to_device(u);
  be().geglu(dg.as<float>(), du.as<float>(), dg.as<float>(), n);
  EXPECT_LT(compare(to_host<float>(dg, g.size()), want).max_abs, 1e-5);
}

TEST(CudaOps, GetRowAndGetRowsEveryType) {
  for (DType t : {DType::F32, DType::F16, DType::BF16, DType::Q8_0, DType::Q4_0, DType::Q4_K, DType::Q5_K,
                  DType::Q6_K}) {
    std::mt19937 rng(4);
    const int64_t rows = 9, cols = 512;
    const size_t rb = row_bytes(t, cols);
    std::vector<uint8_t> table(rows * rb);
    for (int64_t r = 0; r < rows; ++r) kernels::testing::random_row(rng, t, cols, table.data() + r * rb);
    const MatrixView host{t, table.data(), rows, cols, rb};
    Result<PackedMatrix> dev = upload_matrix(host);
    ASSERT_TRUE(dev.ok());
    const std::vector<int32_t> ids = {8, 0, 3, 3};
    std::vector<float> want(ids.size() * cols);
    for (size_t i = 0; i < ids.size(); ++i) ref::get_row(host, ids[i], want.data() + i * cols);
    DeviceBuffer dids = to_device(ids), out(want.size() * 4), one(cols * 4);
    cuda_get_rows(dev->view, dids.as<int32_t>(), static_cast<int64_t>(ids.size()), out.as<float>());
    EXPECT_EQ(to_host<float>(out, want.size()), want) << dtype_name(t);
    be().get_row(dev->view, 3, one.as<float>());
    EXPECT_EQ(to_host<float>(one, cols), std::vector<float>(want.begin() + 2 * cols, want.begin() + 3 * cols));
  }
}

TEST(CudaOps, KvWriteIsBitExactAndSkipsNegativeSlots) {
  std::mt19937 rng(5);
  for (DType t : {DType::F16, DType::BF16, DType::F32}) {
    const int n_kv_heads = 2, head_dim = 32, n_slots = 64;
    const int64_t row = n_kv_heads * head_dim, elem = dtype_info(t).block_bytes;
    const std::vector<float> k = random_floats(rng, 3 * row), v = random_floats(rng, 3 * row);
    const std::vector<int64_t> slots = {5, 63, -1};
    std::vector<uint8_t> ref_k(n_slots * row * elem, 0), ref_v(ref_k.size(), 0);
    const KvLayerView host_kv{ref_k.data(), ref_v.data(), t, n_kv_heads, head_dim, 16};
    ref::kv_write(host_kv, slots.data(), k.data(), v.data(), 2);  // the reference has no padding slots
    DeviceBuffer dk = to_device(std::vector<uint8_t>(ref_k.size(), 0)), dv = to_device(std::vector<uint8_t>(ref_k.size(), 0));
    DeviceBuffer dslots = to_device(slots), dkin = to_device(k), dvin = to_device(v);
    const KvLayerView dev_kv{dk.data(), dv.data(), t, n_kv_heads, head_dim, 16};
    be().kv_write(dev_kv, dslots.as<int64_t>(), dkin.as<float>(), dvin.as<float>(), 3);
    EXPECT_EQ(to_host<uint8_t>(dk, ref_k.size()), ref_k) << dtype_name(t);
    EXPECT_EQ(to_host<uint8_t>(dv, ref_v.size()), ref_v) << dtype_name(t);
  }
}

TEST(CudaOps, ArgmaxPicksTheFirstMaximum) {
  const std::vector<float> logits = {1, 5, 5, -2, /**/ -INFINITY, -3, -1, -1, /**/ 0, 0, 0, 0};
  DeviceBuffer d = to_device(logits), out(3 * 4);
  cuda_argmax(d.as<float>(), 3, 4, out.as<int32_t>());
  EXPECT_EQ(to_host<int32_t>(out, 3), (std::vector<int32_t>{1, 2, 0}));
  std::mt19937 rng(6);
  std::vector<float> big = random_floats(rng, 2 * 151936);
  big[77777] = 100.0f;
  big[151936 + 151935] = 100.0f;
  DeviceBuffer db = to_device(big), ob(2 * 4);
  cuda_argmax(db.as<float>(), 2, 151936, ob.as<int32_t>());
  EXPECT_EQ(to_host<int32_t>(ob, 2), (std::vector<int32_t>{77777, 151935}));
}

TEST(CudaGraphs, CaptureOnceReplayWithNewInputs) {
  CudaContext& ctx = CudaContext::get();
  const int64_t n = 1024;
  std::vector<float> x(n, 1.0f), y(n, 0.0f);
  DeviceBuffer dx = to_device(x), dy = to_device(y);
  DecodeGraphs graphs(GraphBuckets(8));
  int recorded = 0;
  auto step = [&] {
    ++recorded;
    add(dy.as<float>(), dx.as<float>(), n, ctx.stream());
    add(dy.as<float>(), dx.as<float>(), n, ctx.stream());
  };
  graphs.run(4, ctx.stream(), step);
  EXPECT_TRUE(graphs.captured(4));
  std::vector<float> twos(n, 2.0f);
  CUDA_CHECK(cudaMemcpyAsync(dx.data(), twos.data(), n * 4, cudaMemcpyHostToDevice, ctx.stream()));
  graphs.run(4, ctx.stream(), step);
  EXPECT_EQ(recorded, 1);  // the second run replayed
  EXPECT_EQ(to_host<float>(dy, n), std::vector<float>(n, 6.0f));  // 1 + 1, then 2 + 2
}

}  // namespace
}  // namespace kairo::kernels::cuda
