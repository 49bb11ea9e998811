// The CUDA Device (cuda_device.h): memory, transfers and steps, and each op adapted to its kernel launcher (ops.h).
#include "kernels/cuda/cuda_device.h"

#include <algorithm>
#include <cassert>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <unordered_map>

#include "core/format.h"
#include "kernels/cuda/cuda_backend.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/cuda_context.h"
#include "kernels/cuda/cuda_weights.h"
#include "kernels/cuda/device_memory.h"
#include "kernels/cuda/ops.h"
#include "kernels/cuda/step_graphs.h"

namespace kairo::kernels::cuda {
namespace {

constexpr uint64_t kStageAlign = 256;
constexpr uint64_t kStageMinBytes = 1ull << 20;

template <typename T>
T* at(DeviceSpan s) {
  assert((s.buffer == kCudaAddressSpace || s.empty()) && "a span of another device");
  return reinterpret_cast<T*>(static_cast<uintptr_t>(s.offset));
}

DeviceSpan span_of(const void* p) {
  return DeviceSpan{nullptr, kCudaAddressSpace, static_cast<uint64_t>(reinterpret_cast<uintptr_t>(p))};
}

PackedLayout layout_of(const MatrixView& w) {
  assert(w.packing == kCudaPacking && "a matrix this device did not upload");
  Result<PackedLayout> l = packed_layout(w.dtype, w.n_rows, w.n_cols);
  if (!l.ok()) cuda_fail("matrix layout", l.error().message.c_str(), __FILE__, __LINE__);
  return *l;
}

// Graphs on the device's stream (step_graphs.h).
class CudaGraphRuntime final : public GraphRuntime {
 public:
  explicit CudaGraphRuntime(cudaStream_t stream) : stream_(stream) {}
  // Thread-local mode: another thread's unrelated CUDA calls do not invalidate the capture.
  void begin_capture() override { CUDA_CHECK(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal)); }
  void* end_capture() override {
    cudaGraph_t graph = nullptr;
    if (cudaStreamEndCapture(stream_, &graph) != cudaSuccess || graph == nullptr) {
      (void)cudaGetLastError();
      return nullptr;
    }
    cudaGraphExec_t exec = nullptr;
    const cudaError_t e = graph_instantiate(&exec, graph);
    (void)cudaGraphDestroy(graph);
    if (e != cudaSuccess) {
      (void)cudaGetLastError();
      return nullptr;
    }
    return exec;
  }
  void launch(void* graph) override { CUDA_CHECK(cudaGraphLaunch(static_cast<cudaGraphExec_t>(graph), stream_)); }
  void destroy(void* graph) override { (void)cudaGraphExecDestroy(static_cast<cudaGraphExec_t>(graph)); }

 private:
  cudaStream_t stream_;
};

// KAIRO_CUDA_GRAPHS=0 (what --no-cuda-graphs sets) runs every launch eagerly.
bool graphs_enabled() {
  const char* v = std::getenv("KAIRO_CUDA_GRAPHS");
  return v == nullptr || std::string(v) != "0";
}

KvLayerView kv_view(const DeviceKvLayer& kv) {
  return KvLayerView{at<void>(kv.k), at<void>(kv.v), kv.dtype, kv.n_kv_heads, kv.head_dim, kv.block_size};
}

Result<CudaDeviceInfo> device_info(int index) {
  cudaDeviceProp prop{};
  if (const cudaError_t e = cudaGetDeviceProperties(&prop, index); e != cudaSuccess) {
    (void)cudaGetLastError();
    return Error{strprintf("cuda:%d: %s", index, cudaGetErrorString(e))};
  }
  CudaDeviceInfo info;
  info.index = index;
  info.name = prop.name;
  info.compute_major = prop.major;
  info.compute_minor = prop.minor;
  info.total_bytes = prop.totalGlobalMem;
  info.n_sms = prop.multiProcessorCount;
  info.max_shared_memory_per_block = max_smem_per_block(prop);
  // Free memory is per device and needs its context; the current device is restored afterwards.
  int current = 0;
  if (cudaGetDevice(&current) == cudaSuccess && cudaSetDevice(index) == cudaSuccess) {
    size_t free_bytes = 0, total_bytes = 0;
    if (cudaMemGetInfo(&free_bytes, &total_bytes) == cudaSuccess) info.free_bytes = free_bytes;
    (void)cudaSetDevice(current);
  }
  (void)cudaGetLastError();
  return info;
}

class CudaDevice final : public Device {
 public:
  explicit CudaDevice(CudaDeviceInfo info)
      : info_(std::move(info)),
        ctx_(CudaContext::get()),
        graphs_(std::make_unique<CudaGraphRuntime>(ctx_.stream()), graphs_enabled()) {}
  ~CudaDevice() override { (void)cudaStreamSynchronize(ctx_.stream()); }

  DeviceKind kind() const override { return DeviceKind::Cuda; }
  std::string name() const override {
#if defined(KAIRO_HIP)
    return strprintf("cuda:%d (%s, HIP)", info_.index, info_.name.c_str());
#else
    return strprintf("cuda:%d (%s, sm_%d%d)", info_.index, info_.name.c_str(), info_.compute_major,
                     info_.compute_minor);
#endif
  }
  bool host_memory() const override { return false; }

  // ---- memory ----
  Result<DeviceSpan> allocate(uint64_t bytes, const char* what) override {
    Result<DeviceBuffer> b = DeviceBuffer::try_allocate(std::max<uint64_t>(bytes, 1));
    if (!b.ok()) {
      const kernels::DeviceMemoryInfo mem = memory_info();
      return Error{strprintf("%s: could not allocate %s for %s (%s free of %s): %s", name().c_str(),
                             human_bytes(bytes).c_str(), what, human_bytes(mem.free_bytes).c_str(),
                             human_bytes(mem.total_bytes).c_str(), b.error().message.c_str())};
    }
    CUDA_CHECK(cudaMemsetAsync(b->data(), 0, b->size(), ctx_.stream()));
    const DeviceSpan s = span_of(b->data());
    std::lock_guard<std::mutex> lock(mutex_);
    bytes_in_use_ += b->size();
    allocations_.emplace(s.offset, std::move(b).value());
    return s;
  }
  // Never throws (it runs from destructors): after a device failure the memory goes with the context anyway.
  void free(DeviceSpan span) override {
    if (span.empty()) return;
    try {
      graphs_.flush();  // recorded launches may name it
    } catch (const DeviceLost&) {
    }
    (void)cudaStreamSynchronize(ctx_.stream());  // enqueued work may still use it
    std::lock_guard<std::mutex> lock(mutex_);
    const auto it = allocations_.find(span.offset);
    assert(it != allocations_.end() && "free() of a span allocate() did not return");
    if (it == allocations_.end()) return;
    bytes_in_use_ -= it->second.size();
    allocations_.erase(it);
  }
  uint64_t max_allocation_bytes() const override { return info_.total_bytes; }
  // The caller may reuse `src` as soon as this returns, which an asynchronous copy from pageable memory does not
  // promise everywhere (HIP, systems where the GPU reads host memory): wait for it. Uploads are load-time work;
  // per-step inputs go through stage().
  void upload(DeviceSpan dst, const void* src, uint64_t bytes) override {
    if (bytes == 0) return;
    graphs_.flush();
    CUDA_CHECK(cudaMemcpyAsync(at<void>(dst), src, bytes, cudaMemcpyHostToDevice, ctx_.stream()));
    synchronize();
  }
  void download(DeviceSpan src, void* dst, uint64_t bytes) override {
    if (bytes == 0) return;
    graphs_.flush();
    CUDA_CHECK(cudaMemcpyAsync(dst, at<void>(src), bytes, cudaMemcpyDeviceToHost, ctx_.stream()));
    synchronize();
  }
  void copy(DeviceSpan src, DeviceSpan dst, uint64_t bytes) override {
    if (bytes == 0) return;
    graphs_.flush();
    CUDA_CHECK(cudaMemcpyAsync(at<void>(dst), at<void>(src), bytes, cudaMemcpyDeviceToDevice, ctx_.stream()));
  }
  void synchronize() override {
    graphs_.flush();
    const cudaError_t e = cudaStreamSynchronize(ctx_.stream());
    if (e != cudaSuccess) throw DeviceLost(name() + ": " + cudaGetErrorString(e));
  }
  kernels::DeviceMemoryInfo memory_info() const override {
    size_t free_bytes = 0, total_bytes = 0;
    kernels::DeviceMemoryInfo info;
    info.total_bytes = info_.total_bytes;
    if (cudaMemGetInfo(&free_bytes, &total_bytes) == cudaSuccess) {
      info.free_bytes = free_bytes;
      info.free_known = true;
    }
    return info;
  }
  uint64_t bytes_in_use() const override {
    std::lock_guard<std::mutex> lock(mutex_);
    return bytes_in_use_;
  }
  Status check_kv_dtype(DType dtype) const override { return cuda::check_kv_dtype(dtype); }
  Status check_attention_shape(int n_heads, int n_kv_heads, int head_dim) const override {
    return cuda::check_attention_shape(n_heads, n_kv_heads, head_dim);
  }

  Result<std::vector<DeviceMatrix>> upload_matrices(std::span<const MatrixView> host) override {
    // Everything is checked and counted before the first copy, so a model that cannot run is refused whole.
    uint64_t need = 0;
    std::unordered_map<const void*, bool> seen;
    for (const MatrixView& h : host) {
      if (Status st = cuda_check_weight(h); !st) return Error{name() + ": " + st.error().message};
      // The GEMV stages one token's activations in shared memory: every matrix must allow it (the exact path and
      // the HIP build use it for every token count).
      const PackedLayout l = *packed_layout(h.dtype, h.n_rows, h.n_cols);
      if (gemv_smem_per_token(l) * 4 > ctx_.limits().max_smem_per_block) {
        return Error{strprintf("%s: a weight matrix with %lld columns needs %s of shared memory per token in the "
                               "GEMV, more than this device's %s per block; run this model on --device cpu or vulkan",
                               name().c_str(), static_cast<long long>(h.n_cols),
                               human_bytes(static_cast<uint64_t>(gemv_smem_per_token(l) * 4)).c_str(),
                               human_bytes(static_cast<uint64_t>(ctx_.limits().max_smem_per_block)).c_str())};
      }
      if (seen.emplace(h.data, true).second)
        need += static_cast<uint64_t>(packed_layout(h.dtype, h.n_rows, h.n_cols)->total_bytes);
    }
    const kernels::DeviceMemoryInfo mem = memory_info();
    if (mem.free_known && need > mem.free_bytes) {
      return Error{strprintf("%s: the model's weights need %s of device memory and %s is free (of %s): use a "
                             "smaller quantization (e.g. Q4_K_M), free the GPU, or run on --device cpu",
                             name().c_str(), human_bytes(need).c_str(), human_bytes(mem.free_bytes).c_str(),
                             human_bytes(mem.total_bytes).c_str())};
    }
    std::vector<DeviceMatrix> out;
    out.reserve(host.size());
    std::unordered_map<const void*, DeviceMatrix> uploaded;  // tied embeddings: one copy
    for (const MatrixView& h : host) {
      if (auto it = uploaded.find(h.data); it != uploaded.end()) {
        out.push_back(it->second);
        continue;
      }
      Result<PackedMatrix> m = upload_matrix(h);
      if (!m.ok()) return Error{name() + ": " + m.error().message};
      const DeviceMatrix d{m->view, span_of(m->view.data)};
      const uint64_t bytes = static_cast<uint64_t>(layout_of(m->view).total_bytes);
      {
        std::lock_guard<std::mutex> lock(mutex_);
        bytes_in_use_ += bytes;
        weights_.emplace(d.span.offset, Weight{std::move(m->storage), bytes});
      }
      uploaded.emplace(h.data, d);
      out.push_back(d);
    }
    synchronize();
    return out;
  }
  // A tied embedding's second entry names the same copy: erased once, skipped after.
  void free_matrices(std::span<const DeviceMatrix> matrices) override {
    if (matrices.empty()) return;
    synchronize();  // recorded and enqueued launches may still read them
    std::lock_guard<std::mutex> lock(mutex_);
    for (const DeviceMatrix& m : matrices) {
      const auto it = weights_.find(m.span.offset);
      if (it == weights_.end()) continue;
      bytes_in_use_ -= it->second.bytes;
      weights_.erase(it);
    }
  }

  // ---- one step ----
  void begin_step(ThreadPool&) override {
    synchronize();
    reset_stage();
  }
  DeviceSpan stage(const void* host, uint64_t bytes) override {
    uint64_t offset = stage_.empty() ? 0 : align_up(stage_.back().used);
    if (stage_.empty() || offset + bytes > stage_.back().host.size()) {
      const uint64_t last = stage_.empty() ? 0 : stage_.back().host.size();
      const uint64_t size = std::max({bytes, 2 * last, kStageMinBytes});
      stage_.push_back(StageChunk{PinnedBuffer(size), DeviceBuffer(size), 0});
      offset = 0;
    }
    StageChunk& c = stage_.back();
    if (bytes > 0) {
      std::memcpy(c.host.as<uint8_t>() + offset, host, bytes);
      CUDA_CHECK(cudaMemcpyAsync(c.dev.as<uint8_t>() + offset, c.host.as<uint8_t>() + offset, bytes,
                                 cudaMemcpyHostToDevice, ctx_.stream()));
    }
    c.used = offset + bytes;
    return span_of(c.dev.as<uint8_t>() + offset);
  }
  void end_step() override {
    synchronize();
    reset_stage();
  }

  // ---- ops ----
  // Each op is recorded with its signature (step_graphs.h): every value that shapes the launch is in it. Values
  // read on the host (rope factors, attention workspace, launch configs) are resolved here, at record time.
  void get_rows(const DeviceMatrix& table, DeviceSpan ids, int64_t n, DeviceSpan out) override {
    const MatrixView v = table.view;
    const auto* i = at<const int32_t>(ids);
    auto* o = at<float>(out);
    graphs_.record(Signature(1, v.data, v.dtype, v.n_rows, v.n_cols, i, n, o), [=] { cuda_get_rows(v, i, n, o); });
  }
  void gather_rows(DeviceSpan x, DeviceSpan rows, int64_t n, int64_t dim, DeviceSpan out) override {
    const auto* xs = at<const float>(x);
    const auto* r = at<const int32_t>(rows);
    auto* o = at<float>(out);
    cudaStream_t st = ctx_.stream();
    graphs_.record(Signature(2, xs, r, n, dim, o), [=] { cuda::gather_rows(xs, r, n, dim, o, st); });
  }
  void matmul(const DeviceMatrix* ws, int n_mats, DeviceSpan x, const DeviceSpan* ys, int64_t n_tokens,
              Numerics numerics) override {
    if (n_tokens == 0) return;
    for (int i = 0; i < n_mats; ++i) {
      const PackedLayout l = layout_of(ws[i].view);
      const auto* w = static_cast<const uint8_t*>(ws[i].view.data);
      const auto* xs = at<const float>(x);
      auto* y = at<float>(ys[i]);
      // Exact: the GEMV's per-token sums do not depend on how many tokens share the call; cuBLAS's do.
      const bool gemv_fits = gemv_smem_per_token(l) * 4 <= ctx_.limits().max_smem_per_block;
      const MatmulPath path = numerics == Numerics::Exact && gemv_fits
                                  ? MatmulPath::Gemv
                                  : choose_matmul_path(l, n_tokens, ctx_.limits());
      const Signature sig(3, w, l.dtype, l.n_rows, l.n_cols, xs, y, n_tokens, path);
      if (path == MatmulPath::Gemv) {
        const GemvConfig g = gemv_config(l, n_tokens, ctx_.limits());
        cudaStream_t st = ctx_.stream();
        graphs_.record(sig, [=] { gemv(l, w, xs, y, n_tokens, g, st); });
      } else {
        // cuBLAS may grow kairo's conversion workspaces: never captured.
        CudaContext* ctx = &ctx_;
        graphs_.record(sig, [=] { gemm(l, w, xs, y, n_tokens, *ctx); }, /*capturable=*/false);
      }
    }
  }
  void rms_norm(DeviceSpan x, DeviceSpan weight, DeviceSpan y, int64_t n_tokens, int64_t dim, float eps) override {
    const auto* xs = at<const float>(x);
    const auto* w = at<const float>(weight);
    auto* ys = at<float>(y);
    cudaStream_t st = ctx_.stream();
    graphs_.record(Signature(4, xs, w, ys, n_tokens, dim, eps),
                   [=] { cuda::rms_norm(xs, w, ys, n_tokens, dim, eps, st); });
  }
  void rope(DeviceSpan x, DeviceSpan positions, int64_t n_tokens, const RopeParams& p) override {
    auto* xs = at<float>(x);
    const auto* pos = at<const int32_t>(positions);
    const float* factors = rope_factors(p);
    const RopeParams q = p;
    cudaStream_t st = ctx_.stream();
    graphs_.record(Signature(5, xs, pos, n_tokens, q.n_heads, q.head_dim, q.n_rot, q.freq_base, q.freq_scale,
                             q.style, factors, q.mscale),
                   [=] { cuda::rope(xs, pos, n_tokens, q, factors, st); });
  }
  void swiglu(DeviceSpan gate, DeviceSpan up, DeviceSpan out, int64_t n) override {
    const auto* g = at<const float>(gate);
    const auto* u = at<const float>(up);
    auto* o = at<float>(out);
    cudaStream_t st = ctx_.stream();
    graphs_.record(Signature(6, g, u, o, n), [=] { cuda::swiglu(g, u, o, n, st); });
  }
  void geglu(DeviceSpan gate, DeviceSpan up, DeviceSpan out, int64_t n) override {
    const auto* g = at<const float>(gate);
    const auto* u = at<const float>(up);
    auto* o = at<float>(out);
    cudaStream_t st = ctx_.stream();
    graphs_.record(Signature(7, g, u, o, n), [=] { cuda::geglu(g, u, o, n, st); });
  }
  void swiglu_oai(DeviceSpan gate, DeviceSpan up, DeviceSpan out, int64_t n, float alpha, float limit) override {
    const auto* g = at<const float>(gate);
    const auto* u = at<const float>(up);
    auto* o = at<float>(out);
    cudaStream_t st = ctx_.stream();
    graphs_.record(Signature(8, g, u, o, n, alpha, limit), [=] { cuda::swiglu_oai(g, u, o, n, alpha, limit, st); });
  }
  void scale(DeviceSpan x, int64_t n, float factor) override {
    auto* xs = at<float>(x);
    cudaStream_t st = ctx_.stream();
    graphs_.record(Signature(9, xs, n, factor), [=] { cuda::scale(xs, n, factor, st); });
  }
  void add(DeviceSpan y, DeviceSpan x, int64_t n) override {
    auto* ys = at<float>(y);
    const auto* xs = at<const float>(x);
    cudaStream_t st = ctx_.stream();
    graphs_.record(Signature(10, ys, xs, n), [=] { cuda::add(ys, xs, n, st); });
  }
  void add_bias(DeviceSpan x, DeviceSpan bias, int64_t n_tokens, int64_t n) override {
    auto* xs = at<float>(x);
    const auto* b = at<const float>(bias);
    cudaStream_t st = ctx_.stream();
    graphs_.record(Signature(11, xs, b, n_tokens, n), [=] { cuda::add_bias(xs, b, n_tokens, n, st); });
  }
  void add_rows_scaled(DeviceSpan y, DeviceSpan x, DeviceSpan rows, DeviceSpan scales, int64_t n,
                       int64_t dim) override {
    auto* ys = at<float>(y);
    const auto* xs = at<const float>(x);
    const auto* r = at<const int32_t>(rows);
    const auto* sc = at<const float>(scales);
    cudaStream_t st = ctx_.stream();
    graphs_.record(Signature(12, ys, xs, r, sc, n, dim), [=] { cuda::add_rows_scaled(ys, xs, r, sc, n, dim, st); });
  }
  void kv_write(const DeviceKvLayer& kv, DeviceSpan slot_mapping, DeviceSpan k, DeviceSpan v,
                int64_t n_tokens) override {
    const KvLayerView view = kv_view(kv);
    const auto* slots = at<const int64_t>(slot_mapping);
    const auto* ks = at<const float>(k);
    const auto* vs = at<const float>(v);
    cudaStream_t st = ctx_.stream();
    graphs_.record(Signature(13, view.k, view.v, view.dtype, view.n_kv_heads, view.head_dim, view.block_size, slots,
                             ks, vs, n_tokens),
                   [=] { cuda::kv_write(view, slots, ks, vs, n_tokens, st); });
  }
  void attention(DeviceSpan q, DeviceSpan out, const DeviceKvLayer& kv, const DeviceAttentionBatch& batch,
                 int n_heads, float scale) override {
    if (batch.n_tokens == 0) return;
    AttentionBatch b;
    b.n_tokens = batch.n_tokens;
    b.positions = at<const int32_t>(batch.positions);
    b.seq_idx = at<const int32_t>(batch.seq_idx);
    b.block_tables = at<const int32_t>(batch.block_tables);
    b.max_blocks_per_seq = batch.max_blocks_per_seq;
    b.window = batch.window;
    b.softcap = batch.softcap;
    b.sinks = batch.sinks.empty() ? nullptr : at<const float>(batch.sinks);
    const KvLayerView view = kv_view(kv);
    const int64_t max_ctx = static_cast<int64_t>(batch.max_blocks_per_seq) * kv.block_size;
    const AttentionPlan plan = plan_attention(batch.n_tokens, n_heads, kv.n_kv_heads, kv.head_dim, max_ctx,
                                              ctx_.limits(), batch.numerics);
    float* partials = nullptr;
    if (plan.partial_floats > 0) {
      // Growing frees the old workspace, which launches recorded earlier may still name: put them on the stream
      // first (growing waits for them).
      if (4 * plan.partial_floats > ctx_.attention_workspace_bytes()) graphs_.flush();
      partials = ctx_.attention_workspace(4 * plan.partial_floats);
    }
    const auto* qs = at<const float>(q);
    auto* o = at<float>(out);
    cudaStream_t st = ctx_.stream();
    graphs_.record(Signature(14, qs, o, view.k, view.v, view.dtype, view.n_kv_heads, view.head_dim, view.block_size,
                             b.n_tokens, b.positions, b.seq_idx, b.block_tables, b.max_blocks_per_seq, b.window,
                             b.softcap, b.sinks, n_heads, scale, plan.n_splits, plan.split_keys, partials),
                   [=] { paged_attention(qs, o, view, b, n_heads, scale, plan, partials, st); });
  }

 private:
  struct StageChunk {
    PinnedBuffer host;
    DeviceBuffer dev;
    uint64_t used = 0;
  };

  static uint64_t align_up(uint64_t x) { return (x + kStageAlign - 1) / kStageAlign * kStageAlign; }

  // Keeps only the largest chunk (called after a synchronize: no copy reads the pinned bytes any more).
  void reset_stage() {
    if (stage_.empty()) return;
    auto largest = std::max_element(stage_.begin(), stage_.end(), [](const StageChunk& a, const StageChunk& b) {
      return a.host.size() < b.host.size();
    });
    StageChunk keep = std::move(*largest);
    keep.used = 0;
    stage_.clear();
    stage_.push_back(std::move(keep));
  }

  // The device copy of a rope's frequency factors (a host array, the same every step), uploaded once per content.
  const float* rope_factors(const RopeParams& p) {
    if (p.freq_factors == nullptr) return nullptr;
    const size_t n = static_cast<size_t>(p.n_rot / 2);
    for (const auto& [factors, buffer] : rope_factors_) {
      if (factors.size() == n && std::equal(factors.begin(), factors.end(), p.freq_factors))
        return buffer.as<const float>();
    }
    std::vector<float> key(p.freq_factors, p.freq_factors + n);
    DeviceBuffer b(n * sizeof(float));
    CUDA_CHECK(cudaMemcpyAsync(b.data(), key.data(), n * sizeof(float), cudaMemcpyHostToDevice, ctx_.stream()));
    rope_factors_.emplace_back(std::move(key), std::move(b));
    return rope_factors_.back().second.as<const float>();
  }

  CudaDeviceInfo info_;
  CudaContext& ctx_;
  struct Weight {
    std::shared_ptr<void> storage;
    uint64_t bytes = 0;
  };
  // allocations_, weights_, bytes_in_use_: the server may free a request's buffers on another thread.
  mutable std::mutex mutex_;
  std::unordered_map<uint64_t, DeviceBuffer> allocations_;
  std::unordered_map<uint64_t, Weight> weights_;  // by device address
  uint64_t bytes_in_use_ = 0;
  std::vector<StageChunk> stage_;
  // A model has one or two sets (llama-3's rope_freqs; YaRN's): a list, not a map keyed by vectors (whose C++20
  // three-way comparison crashes Debian's clang 15 in the HIP build).
  std::vector<std::pair<std::vector<float>, DeviceBuffer>> rope_factors_;
  StepGraphs graphs_;  // last: destroyed first, while the stream and buffers its graphs name still exist
};

}  // namespace

Result<std::vector<CudaDeviceInfo>> list_devices() {
  int n = 0;
  if (const cudaError_t e = cudaGetDeviceCount(&n); e != cudaSuccess) {
    (void)cudaGetLastError();
    return Error{std::string("no usable CUDA device: ") + cudaGetErrorString(e) +
                 " (install the NVIDIA driver, or check that this process can see the GPU)"};
  }
  if (n == 0) return Error{"no CUDA device found"};
  std::vector<CudaDeviceInfo> out;
  for (int i = 0; i < n; ++i) {
    KAIRO_TRY_ASSIGN(CudaDeviceInfo info, device_info(i));
    out.push_back(std::move(info));
  }
  return out;
}

Result<std::shared_ptr<Device>> open_device(int index) {
  KAIRO_TRY_ASSIGN(std::vector<CudaDeviceInfo> devices, list_devices());
  if (index < 0 || index >= static_cast<int>(devices.size())) {
    std::string found;
    for (const auto& d : devices) found += strprintf("%scuda:%d (%s)", found.empty() ? "" : ", ", d.index, d.name.c_str());
    return Error{strprintf("there is no CUDA device %d; found %s", index, found.c_str())};
  }
  if (index != 0) {
    return Error{strprintf("cuda:%d: this version runs on cuda:0 only (one kernel context per process); run with "
                           "CUDA_VISIBLE_DEVICES=%d and --device cuda to use that GPU",
                           index, index)};
  }
  return std::shared_ptr<Device>(std::make_shared<CudaDevice>(devices[0]));
}

Status check_kv_dtype(DType dtype) {
  if (dtype == DType::F32 || dtype == DType::F16 || dtype == DType::BF16) return Status::success();
  return Error{"cuda: KV cache dtype " + std::string(dtype_name(dtype)) +
               " is not supported by the CUDA device: use --kv-dtype f16, bf16 or f32"};
}

}  // namespace kairo::kernels::cuda
