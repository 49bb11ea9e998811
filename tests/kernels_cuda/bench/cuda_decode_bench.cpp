// Decode-GEMV bandwidth over a whole model's matmul weights: every layer's 7 projections plus the output, one
// token, replayed as one CUDA graph (no launch gaps), reported as GB/s of weight bytes and % of the measured read
// bandwidth. This is the ceiling a single-stream decode step approaches (attention and the small ops add ~2-5 %).
// Usage: cuda_decode_bench [1b|8b ...] [--types Q8_0,F16,...] [--iters N]
#include <cuda_runtime.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/cuda/bandwidth.h"
#include "kernels/cuda/cuda_backend.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/cuda_context.h"
#include "kernels/cuda/cuda_graph.h"
#include "kernels/cuda/cuda_weights.h"
#include "kernels/cuda/device_memory.h"
#include "kernels/cuda/packed_layout.h"

using namespace kairo;
using namespace kairo::kernels;
using namespace kairo::kernels::cuda;

namespace {

struct Shape {
  const char* name;
  int n_layers, dim, kv_dim, ffn, vocab;
};
const Shape kShapes[] = {{"1b", 16, 2048, 512, 8192, 128256}, {"8b", 32, 4096, 1024, 14336, 128256}};

struct Mat {
  MatrixView view;
  DeviceBuffer buf;
};

Mat make(DType t, int64_t rows, int64_t cols, uint32_t seed) {
  const PackedLayout l = *packed_layout(t, rows, cols);
  Mat m{MatrixView{t, nullptr, rows, cols, static_cast<size_t>(l.qs_row_bytes), kCudaPacking},
        DeviceBuffer(static_cast<size_t>(l.total_bytes))};
  m.view.data = m.buf.data();
  fill_random_bytes(m.buf.data(), static_cast<size_t>(l.total_bytes), seed);
  if (l.scale_row_elems > 0) {
    fill_u16(reinterpret_cast<uint16_t*>(m.buf.as<uint8_t>() + l.scales_offset),
             static_cast<size_t>(rows * l.scale_row_elems), 0x211f);  // f16 0.01
  }
  return m;
}

}  // namespace

int main(int argc, char** argv) {
  if (cuda_device_count() == 0) {
    std::fprintf(stderr, "no CUDA device\n");
    return 1;
  }
  std::vector<const Shape*> shapes;
  std::vector<DType> types = {DType::Q8_0, DType::F16, DType::BF16, DType::Q4_K, DType::Q4_0, DType::Q6_K};
  int iters = 20;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--iters") == 0 && i + 1 < argc) {
      iters = std::atoi(argv[++i]);
    } else if (std::strcmp(argv[i], "--types") == 0 && i + 1 < argc) {
      types.clear();
      std::string list = argv[++i];
      for (size_t p = 0; p <= list.size();) {
        const size_t e = std::min(list.find(',', p), list.size());
        const auto t = dtype_from_name(list.substr(p, e - p));
        if (!t || !cuda_supports(*t)) {
          std::fprintf(stderr, "unknown or unsupported type '%s'\n", list.substr(p, e - p).c_str());
          return 2;
        }
        types.push_back(*t);
        p = e + 1;
      }
    } else {
      for (const Shape& s : kShapes) {
        if (std::strcmp(argv[i], s.name) == 0) shapes.push_back(&s);
      }
    }
  }
  if (shapes.empty()) shapes = {&kShapes[0], &kShapes[1]};

  CudaContext& ctx = CudaContext::get();
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  const double bw = measure_read_bandwidth(size_t{4} << 30, 10);
  std::printf("device: %s, %d SMs; measured read bandwidth %.0f GB/s\n", prop.name, prop.multiProcessorCount, bw);
  std::printf("%-4s %-5s %10s %10s %10s %8s %12s\n", "model", "type", "weights", "ms/token", "GB/s", "% bw",
              "eager ms");
  ThreadPool pool(1);
  for (const Shape* s : shapes) {
    for (DType t : types) {
      std::vector<Mat> mats;
      uint32_t seed = 1;
      for (int l = 0; l < s->n_layers; ++l) {
        mats.push_back(make(t, s->dim, s->dim, seed++));     // wq
        mats.push_back(make(t, s->kv_dim, s->dim, seed++));  // wk
        mats.push_back(make(t, s->kv_dim, s->dim, seed++));  // wv
        mats.push_back(make(t, s->dim, s->dim, seed++));     // wo
        mats.push_back(make(t, s->ffn, s->dim, seed++));     // gate
        mats.push_back(make(t, s->ffn, s->dim, seed++));     // up
        mats.push_back(make(t, s->dim, s->ffn, seed++));     // down
      }
      mats.push_back(make(t, s->vocab, s->dim, seed++));     // output
      uint64_t bytes = 0;
      for (const Mat& m : mats) bytes += static_cast<uint64_t>(packed_layout(t, m.view.n_rows, m.view.n_cols)->total_bytes);
      DeviceBuffer x(static_cast<size_t>(s->ffn) * 4), y(static_cast<size_t>(s->vocab) * 4);
      fill_u16(x.as<uint16_t>(), static_cast<size_t>(s->ffn) * 2, 0x3c00);  // any finite activations
      auto step = [&] {
        for (const Mat& m : mats) cuda_backend().matmul(m.view, x.as<float>(), y.as<float>(), 1, pool);
      };
      cudaEvent_t a, b;
      CUDA_CHECK(cudaEventCreate(&a));
      CUDA_CHECK(cudaEventCreate(&b));
      step();  // warm-up (eager)
      CUDA_CHECK(cudaEventRecord(a, ctx.stream()));
      step();
      CUDA_CHECK(cudaEventRecord(b, ctx.stream()));
      CUDA_CHECK(cudaEventSynchronize(b));
      float eager_ms = 0;
      CUDA_CHECK(cudaEventElapsedTime(&eager_ms, a, b));
      DecodeGraphs graphs(GraphBuckets(1));
      graphs.run(1, ctx.stream(), step);
      ctx.synchronize();
      CUDA_CHECK(cudaEventRecord(a, ctx.stream()));
      for (int i = 0; i < iters; ++i) graphs.run(1, ctx.stream(), step);
      CUDA_CHECK(cudaEventRecord(b, ctx.stream()));
      CUDA_CHECK(cudaEventSynchronize(b));
      float ms = 0;
      CUDA_CHECK(cudaEventElapsedTime(&ms, a, b));
      ms /= static_cast<float>(iters);
      const double gbs = static_cast<double>(bytes) / (ms * 1e-3) / 1e9;
      std::printf("%-5s %-5s %8.2f GB %10.3f %10.0f %7.1f%% %12.3f\n", s->name, std::string(dtype_name(t)).c_str(),
                  static_cast<double>(bytes) / 1e9, ms, gbs, 100.0 * gbs / bw, eager_ms);
      std::fflush(stdout);
      CUDA_CHECK(cudaEventDestroy(a));
      CUDA_CHECK(cudaEventDestroy(b));
    }
  }
  return 0;
}
