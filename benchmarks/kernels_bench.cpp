// Matmul micro benchmarks (Google Benchmark) in hardware terms: GB/s of weights streamed for the one-token GEMV
// (decode is bandwidth-bound: compare with the machine's read bandwidth) and TOP/s for the many-token GEMM
// (prefill and batched decode are compute-bound: compare with the int8 VNNI/AMX peak).
//
// The GEMV case runs every matmul of one decode step of a TinyLlama-1.1B-shaped model (22 layers of
// q/k/v/o/gate/up/down plus the 32000-row output), so the weights (0.6-2.2 GB) far exceed the caches, as in real
// decode. The GEMM cases use one layer's shapes with n tokens.
//   kernels_bench --benchmark_filter='Gemv/Q4_0' ; arguments: /threads/tokens for GEMV (the whole model, cold), /tokens/threads for GEMM (one layer).
// KAIRO_ISA=avx2|avx512|amx selects the path (default: the best this CPU has); weights are repacked with the
// backend's pack_weights like a model loader would, unless KAIRO_BENCH_NO_PACK is set.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/half.h"
#include "core/thread_pool.h"
#include "kernels/backend.h"
#include "tensor/dtype.h"

namespace {

using kairo::DType;
using kairo::ThreadPool;
using kairo::kernels::MatrixView;

// A valid weight matrix: one random row (random bytes with small f16 scales), copied to every row. Contents don't
// affect speed; validity keeps the kernels on their normal paths.
struct Matrix {
  std::vector<uint8_t> data;
  MatrixView view;
  kairo::kernels::PackedMatrix packed;  // the backend's load-time layout, used when it has one (as a model would)
  size_t bytes = 0;
};

std::vector<int> scale_offsets(DType t) {
  switch (t) {
    case DType::Q4_0: case DType::Q5_0: case DType::Q8_0: return {0};
    case DType::Q4_1: case DType::Q5_1: case DType::Q4_K: case DType::Q5_K: return {0, 2};
    case DType::Q6_K: return {208};
    default: return {};
  }
}

std::unique_ptr<Matrix> make_matrix(DType type, int64_t rows, int64_t cols) {
  auto m = std::make_unique<Matrix>();
  const size_t rb = kairo::row_bytes(type, cols);
  m->data.resize(rb * static_cast<size_t>(rows));
  std::mt19937 rng(1);
  std::vector<uint8_t> row(rb);
  for (auto& b : row) b = static_cast<uint8_t>(rng());
  const auto& info = kairo::dtype_info(type);
  if (type == DType::F32 || type == DType::F16 || type == DType::BF16) {
    for (int64_t i = 0; i < cols; ++i) {
      const float v = static_cast<float>(static_cast<int>(rng() % 2001) - 1000) / 1000.0f;
      if (type == DType::F32) std::memcpy(row.data() + 4 * i, &v, 4);
      else {
        const uint16_t h = type == DType::F16 ? kairo::f32_to_f16(v) : kairo::f32_to_bf16(v);
        std::memcpy(row.data() + 2 * i, &h, 2);
      }
    }
  } else if (type == DType::MXFP4) {  // E8M0 scale 2^-7 per block
    for (int64_t b = 0; b < cols / info.block_size; ++b) row[static_cast<size_t>(b * info.block_bytes)] = 121;
  } else {
    for (int64_t b = 0; b < cols / info.block_size; ++b)
      for (int off : scale_offsets(type)) {
        const uint16_t h = kairo::f32_to_f16(0.01f);
        std::memcpy(row.data() + b * info.block_bytes + off, &h, 2);
      }
  }
  for (int64_t r = 0; r < rows; ++r) std::memcpy(m->data.data() + r * rb, row.data(), rb);
  m->view = MatrixView{type, m->data.data(), rows, cols, rb};
  const auto& be = kairo::kernels::best_cpu_backend();
  if (be.pack_weights != nullptr && std::getenv("KAIRO_BENCH_NO_PACK") == nullptr) {
    m->packed = be.pack_weights(m->view);
    if (m->packed.view.data != nullptr) {
      m->view = m->packed.view;
      m->data = {};  // bytes moved to the packed copy; keep the count for GB/s
      m->data.shrink_to_fit();
    }
  }
  m->bytes = m->view.row_bytes * static_cast<size_t>(rows);
  return m;
}

constexpr int64_t kDim = 2048, kKv = 256, kFfn = 5632, kVocab = 32000, kLayers = 22;

struct DecodeModel {
  std::vector<std::unique_ptr<Matrix>> mats;
  size_t bytes = 0;
  double macs = 0;
};

DecodeModel& decode_model(DType type) {
  static std::map<DType, DecodeModel>* models = new std::map<DType, DecodeModel>();
  auto it = models->find(type);
  if (it != models->end()) return it->second;
  DecodeModel& m = (*models)[type];
  const std::pair<int64_t, int64_t> shapes[] = {{kDim, kDim}, {kKv, kDim},  {kKv, kDim}, {kDim, kDim},
                                                {kFfn, kDim}, {kFfn, kDim}, {kDim, kFfn}};
  for (int64_t l = 0; l < kLayers; ++l)
    for (auto [r, c] : shapes) m.mats.push_back(make_matrix(type, r, c));
  m.mats.push_back(make_matrix(type, kVocab, kDim));
  for (auto& mat : m.mats) {
    m.bytes += mat->bytes;
    m.macs += static_cast<double>(mat->view.n_rows) * mat->view.n_cols;
  }
  return m;
}

// One decode step: every matrix of the model times range(1) tokens (1: a decode step; 2-8: the few tokens each expert
// of a batched mixture-of-experts step gets, with its weights as cold as here).
void BM_Gemv(benchmark::State& state, DType type) {
  ThreadPool pool(static_cast<int>(state.range(0)));
  const int64_t n_tokens = state.range(1);
  DecodeModel& model = decode_model(type);
  std::vector<float> x(static_cast<size_t>(kFfn * n_tokens), 0.5f), y(static_cast<size_t>(kVocab * n_tokens));
  const auto& be = kairo::kernels::best_cpu_backend();
  for (auto _ : state) {
    for (auto& m : model.mats) be.matmul(m->view, x.data(), y.data(), n_tokens, pool);
    benchmark::ClobberMemory();
  }
  state.counters["GB/s"] = benchmark::Counter(static_cast<double>(model.bytes) * state.iterations() / 1e9,
                                              benchmark::Counter::kIsRate);
  state.counters["tok/s"] = benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
  state.SetLabel(be.name);
}

// The kernel's own speed with weights in cache (one 512x2048 matrix, in L2, one thread, CPU time): how far above the
// memory bandwidth the decode kernel could go, i.e. whether it is compute-limited.
void BM_GemvHot(benchmark::State& state, DType type) {
  ThreadPool pool(1);
  auto m = make_matrix(type, 512, kDim);
  std::vector<float> x(kDim, 0.5f), y(kDim);
  const auto& be = kairo::kernels::best_cpu_backend();
  for (auto _ : state) {
    be.matmul(m->view, x.data(), y.data(), 1, pool);
    benchmark::ClobberMemory();
  }
  state.counters["GB/s"] = benchmark::Counter(static_cast<double>(m->bytes) * state.iterations() / 1e9,
                                              benchmark::Counter::kIsRate);
  state.SetLabel(be.name);
}

// One layer's matmuls (q, k, v, o, gate, up, down) times n tokens; range(2) != 0: relaxed numerics (what sampled
// requests get: AMX bf16 tiles where the backend has them), else exact (batch-invariant).
void BM_Gemm(benchmark::State& state, DType type) {
  const int64_t n_tokens = state.range(0);
  ThreadPool pool(static_cast<int>(state.range(1)));
  const auto numerics = state.range(2) != 0 ? kairo::kernels::Numerics::Relaxed : kairo::kernels::Numerics::Exact;
  const std::pair<int64_t, int64_t> shapes[] = {{kDim, kDim}, {kKv, kDim},  {kKv, kDim}, {kDim, kDim},
                                                {kFfn, kDim}, {kFfn, kDim}, {kDim, kFfn}};
  std::vector<std::unique_ptr<Matrix>> mats;
  double macs = 0;
  for (auto [r, c] : shapes) {
    mats.push_back(make_matrix(type, r, c));
    macs += static_cast<double>(r) * c * n_tokens;
  }
  std::vector<float> x(static_cast<size_t>(n_tokens * kFfn)), y(static_cast<size_t>(n_tokens * kFfn));
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 17) * 0.1f - 0.8f;
  const auto& be = kairo::kernels::best_cpu_backend();
  for (auto _ : state) {
    for (auto& m : mats) kairo::kernels::matmul(be, m->view, x.data(), y.data(), n_tokens, pool, numerics);
    benchmark::ClobberMemory();
  }
  state.counters["TOP/s"] = benchmark::Counter(2 * macs * state.iterations() / 1e12, benchmark::Counter::kIsRate);
  // Tokens of a 22-layer model per second if only these matmuls ran (the output layer excluded).
  state.counters["layer-tok/s"] =
      benchmark::Counter(static_cast<double>(n_tokens) * state.iterations() / kLayers, benchmark::Counter::kIsRate);
  state.SetLabel(be.name);
}

// Attention of one layer, TinyLlama-shaped (32 heads, 4 KV heads, head_dim 64, f16 KV): a prefill of n tokens of
// one sequence (causal), or one decode token per sequence for 16 sequences at context n.
void BM_Attention(benchmark::State& state) {
  const int64_t n = state.range(0);
  const bool decode16 = state.range(1) != 0;
  ThreadPool pool(static_cast<int>(state.range(2)));
  const int n_heads = 32, n_kv = 4, d_head = 64, block = 16;
  const int n_seqs = decode16 ? 16 : 1;
  const int blocks_per_seq = static_cast<int>((n + block - 1) / block);
  std::vector<uint16_t> k(static_cast<size_t>(n_seqs) * blocks_per_seq * block * n_kv * d_head, 0x3c00);
  std::vector<uint16_t> v = k;
  std::vector<int32_t> tables(static_cast<size_t>(n_seqs) * blocks_per_seq);
  for (size_t i = 0; i < tables.size(); ++i) tables[i] = static_cast<int32_t>(i);
  std::vector<int32_t> pos, seq;
  for (int s = 0; s < n_seqs; ++s) {
    if (decode16) {
      pos.push_back(static_cast<int32_t>(n - 1));
      seq.push_back(s);
    } else {
      for (int64_t t = 0; t < n; ++t) {
        pos.push_back(static_cast<int32_t>(t));
        seq.push_back(s);
      }
    }
  }
  kairo::kernels::KvLayerView kv{k.data(), v.data(), DType::F16, n_kv, d_head, block};
  kairo::kernels::AttentionBatch batch{static_cast<int64_t>(pos.size()), pos.data(), seq.data(), tables.data(),
                                       blocks_per_seq};
  std::vector<float> q(pos.size() * n_heads * d_head, 0.1f), out(q.size());
  const auto& be = kairo::kernels::best_cpu_backend();
  for (auto _ : state) {
    be.attention(q.data(), out.data(), kv, batch, n_heads, 0.125f, pool);
    benchmark::ClobberMemory();
  }
  state.counters["tok/s"] = benchmark::Counter(static_cast<double>(pos.size()) * state.iterations(),
                                               benchmark::Counter::kIsRate);
  state.SetLabel(be.name);
}
BENCHMARK(BM_Attention)->Args({512, 0, 1})->Args({512, 0, 2})->Args({1024, 1, 2})->Unit(benchmark::kMillisecond);

const DType kTypes[] = {DType::F32,  DType::F16,  DType::BF16, DType::Q8_0, DType::Q4_0, DType::Q4_1,
                        DType::Q5_0, DType::Q5_1, DType::Q4_K, DType::Q5_K, DType::Q6_K, DType::MXFP4};

int register_all() {
  for (DType t : kTypes) {
    const std::string name(kairo::dtype_name(t));
    // F32 decode of the whole model would need 4.4 GB: bench it on the model too, it is the honest number.
    benchmark::RegisterBenchmark(("Gemv/" + name).c_str(), BM_Gemv, t)
        ->ArgNames({"threads", "tokens"})
        ->Args({1, 1})->Args({2, 1})->Args({2, 2})->Args({2, 3})->Args({2, 4})
        ->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(2.0);
    benchmark::RegisterBenchmark(("GemvHot/" + name).c_str(), BM_GemvHot, t)->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark(("Gemm/" + name).c_str(), BM_Gemm, t)
        ->ArgNames({"tokens", "threads", "relaxed"})
        ->Args({2, 2, 0})->Args({4, 2, 0})->Args({8, 2, 0})->Args({12, 2, 0})->Args({16, 1, 0})->Args({24, 2, 0})->Args({32, 2, 0})->Args({16, 2, 0})->Args({64, 2, 0})
        ->Args({512, 1, 0})->Args({512, 2, 0})
        ->Args({64, 2, 1})->Args({512, 2, 1})
        ->Unit(benchmark::kMillisecond)->UseRealTime();
  }
  return 0;
}
const int registered = register_all();

}  // namespace

BENCHMARK_MAIN();
