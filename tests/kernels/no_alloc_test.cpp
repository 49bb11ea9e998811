// The optimized kernels must not allocate on the hot path: scratch is per thread, sized on first use. This binary
// replaces the global operator new to count allocations made while a counting window is open.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <vector>

#include "core/thread_pool.h"
#include "kernel_test_util.h"

namespace {
std::atomic<bool> g_counting{false};
std::atomic<long> g_allocations{0};
}  // namespace

// These replace the global allocation functions, so new/free pairing is by construction; GCC can't see that.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif
void* operator new(std::size_t n) {
  if (g_counting.load(std::memory_order_relaxed)) g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace kairo::kernels {
namespace {

class NoAllocTest : public ::testing::TestWithParam<cpu::Isa> {};

TEST_P(NoAllocTest, SecondCallOfEachOpAllocatesNothing) {
  KAIRO_BACKEND_OR_SKIP(be, GetParam());
  ThreadPool pool(2);
  std::mt19937 rng(9);
  // Weights of a quantized and a float type, plus a packed copy where the backend makes one.
  std::vector<MatrixView> views;
  std::vector<std::vector<uint8_t>> storage;
  std::vector<PackedMatrix> packed;
  for (DType t : {DType::Q4_0, DType::Q4_K, DType::F16}) {
    const int64_t rows = 40, cols = 512;
    storage.emplace_back(row_bytes(t, cols) * rows);
    for (int64_t r = 0; r < rows; ++r)
      testing::random_row(rng, t, cols, storage.back().data() + r * row_bytes(t, cols));
    views.push_back(MatrixView{t, storage.back().data(), rows, cols, row_bytes(t, cols)});
    if (be->pack_weights != nullptr) {
      packed.push_back(be->pack_weights(views.back()));
      if (packed.back().view.data != nullptr) views.push_back(packed.back().view);
    }
  }
  const auto x = testing::random_floats(rng, 20 * 512);
  std::vector<float> y(20 * 40);
  // Attention over a paged cache of 2 sequences.
  const int n_heads = 8, n_kv = 2, d = 64, block = 16;
  std::vector<uint16_t> kmem(8 * block * n_kv * d, 0x3c00), vmem = kmem;
  KvLayerView kv{kmem.data(), vmem.data(), DType::F16, n_kv, d, block};
  const std::vector<int32_t> tables = {3, 1, 0, 2, 5, 4, 7, 6};
  const std::vector<int32_t> pos = {40, 63, 10}, seq = {0, 0, 1};
  AttentionBatch batch{3, pos.data(), seq.data(), tables.data(), 4};
  auto q = testing::random_floats(rng, 3 * n_heads * d);
  std::vector<float> out(q.size());
  RopeParams rp;
  rp.n_heads = n_heads;
  rp.head_dim = d;
  rp.n_rot = d;

  auto run_all = [&] {
    for (const MatrixView& v : views)
      for (int64_t n_tokens : {1, 20}) be->matmul(v, x.data(), y.data(), n_tokens, pool);
    be->attention(q.data(), out.data(), kv, batch, n_heads, 0.125f, pool);
    be->rope(q.data(), pos.data(), 3, rp);
  };
  run_all();  // sizes the scratch buffers
  g_allocations = 0;
  g_counting = true;
  run_all();
  g_counting = false;
  EXPECT_EQ(g_allocations.load(), 0);
}

INSTANTIATE_TEST_SUITE_P(Isas, NoAllocTest, ::testing::ValuesIn(testing::optimized_isas()),
                         testing::isa_param_name);

}  // namespace
}  // namespace kairo::kernels
