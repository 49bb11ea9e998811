// The CPU device: device memory is host memory, so spans are addresses and every op calls the Backend kernel table
// directly on them (no staging, no copies). The thread pool of the step runs the parallel kernels.
#include <atomic>
#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstring>
#include <exception>
#include <fstream>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "core/bulk_memory.h"
#include "core/format.h"
#include "core/out_of_memory.h"
#include "kernels/device.h"

namespace kairo::kernels {
namespace {

// fn(0) .. fn(n - 1), on as many threads as the process may use (items taken one at a time). The first exception
// stops the others after their current item and is rethrown here. Helpers that cannot be started (no memory for
// their stacks) are done without: the threads that run take every item.
template <typename Fn>
void for_each_on_every_core(size_t n, Fn&& fn) {
  std::atomic<size_t> next{0};
  std::exception_ptr failure;
  std::mutex failure_mutex;
  auto worker = [&] {
    try {
      for (size_t i = next.fetch_add(1); i < n; i = next.fetch_add(1)) fn(i);
    } catch (...) {
      std::lock_guard<std::mutex> lock(failure_mutex);
      if (!failure) failure = std::current_exception();
      next.store(n);
    }
  };
  const size_t n_threads = std::min<size_t>(static_cast<size_t>(ThreadPool::available_cores()), n);
  std::vector<std::thread> helpers;
  helpers.reserve(n_threads);  // before any thread starts: a throw from here on would leave one unjoined
  for (size_t i = 1; i < n_threads; ++i) {
    try {
      helpers.emplace_back(worker);
    } catch (const std::exception&) {  // std::system_error (no stack), std::bad_alloc (no thread state)
      break;
    }
  }
  worker();
  for (auto& h : helpers) h.join();
  if (failure) std::rethrow_exception(failure);
}

// MemTotal and MemAvailable of /proc/meminfo, in bytes (0 when unreadable).
DeviceMemoryInfo read_meminfo() {
  DeviceMemoryInfo info;
  std::ifstream in("/proc/meminfo");
  std::string key;
  uint64_t kib = 0;
  std::string unit;
  while (in >> key >> kib >> unit) {
    if (key == "MemTotal:") info.total_bytes = kib * 1024;
    if (key == "MemAvailable:") {
      info.free_bytes = kib * 1024;
      info.free_known = true;
    }
  }
  return info;
}

class CpuDevice final : public Device {
 public:
  explicit CpuDevice(const Backend& be) : be_(be) {}

  DeviceKind kind() const override { return DeviceKind::Cpu; }
  std::string name() const override { return std::string("cpu (") + be_.name + ")"; }
  bool host_memory() const override { return true; }

  Result<DeviceSpan> allocate(uint64_t bytes, const char* what) override {
    std::shared_ptr<void> mem;
    try {
      mem = allocate_bulk(static_cast<size_t>(std::max<uint64_t>(bytes, 1)));
    } catch (const std::bad_alloc&) {
      return Error{strprintf("cannot allocate %s for %s: the system has no more memory%s", human_bytes(bytes).c_str(),
                             what, address_space_limit_note().c_str())};
    }
    // Written now, not on first use: the memory is committed here, where a shortage is reported, rather than
    // faulted in mid-request.
    std::memset(mem.get(), 0, static_cast<size_t>(bytes));
    std::lock_guard<std::mutex> lock(mutex_);
    DeviceSpan span{mem.get(), 0, 0};
    own(std::move(mem), bytes);
    return span;
  }
  void free(DeviceSpan span) override {
    std::lock_guard<std::mutex> lock(mutex_);
    disown(span.ptr);
  }
  uint64_t max_allocation_bytes() const override { return UINT64_MAX; }
  void upload(DeviceSpan dst, const void* src, uint64_t bytes) override { std::memcpy(dst.ptr, src, bytes); }
  void download(DeviceSpan src, void* dst, uint64_t bytes) override { std::memcpy(dst, src.ptr, bytes); }
  void copy(DeviceSpan src, DeviceSpan dst, uint64_t bytes) override { std::memcpy(dst.ptr, src.ptr, bytes); }
  void synchronize() override {}
  DeviceMemoryInfo memory_info() const override { return read_meminfo(); }
  uint64_t bytes_in_use() const override {
    std::lock_guard<std::mutex> lock(mutex_);
    return bytes_in_use_;
  }
  Status check_kv_dtype(DType dtype) const override {
    if (dtype == DType::F16 || dtype == DType::BF16 || dtype == DType::F32 || dtype == DType::Q8_0) return {};
    return Error{strprintf("KV cache dtype %s is not supported (use f16, bf16, q8_0 or f32)",
                           std::string(dtype_name(dtype)).c_str())};
  }

  Result<std::vector<DeviceMatrix>> upload_matrices(std::span<const MatrixView> host) override {
    std::vector<DeviceMatrix> out(host.size());
    std::vector<PackedMatrix> packed(host.size());
    // Packing is the first write to every page of the packed copy, and page population (the kernel zeroing fresh
    // pages; on a VM, the host backing them) dominated load time on one thread, so every core packs at once.
    // The packed copies are the load's big allocations: one that fails is an error with its size, not an exception
    // (the copies made so far are freed with `packed`).
    try {
      if (be_.pack_weights) {
        for_each_on_every_core(host.size(), [&](size_t i) { packed[i] = be_.pack_weights(host[i]); });
      }
    } catch (const std::bad_alloc& e) {
      return Error{strprintf("%s while repacking the weights for %s", describe_allocation_failure(e).c_str(),
                             name().c_str())};
    }
    std::lock_guard<std::mutex> lock(mutex_);
    for (size_t i = 0; i < host.size(); ++i) {
      const MatrixView& view = packed[i].view.data ? packed[i].view : host[i];
      out[i] = DeviceMatrix{view, DeviceSpan{const_cast<void*>(view.data), 0, 0}};
      // The packed view's rows (tile padding aside): counted and given back as the same number.
      if (packed[i].storage) own(std::move(packed[i].storage), view.row_bytes * static_cast<uint64_t>(view.n_rows));
    }
    return out;
  }
  void free_matrices(std::span<const DeviceMatrix> matrices) override {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const DeviceMatrix& m : matrices) disown(m.span.ptr);  // a host view's bytes are not in owned_
  }

  void begin_step(ThreadPool& pool) override { pool_ = &pool; }
  DeviceSpan stage(const void* host, uint64_t) override { return DeviceSpan{const_cast<void*>(host), 0, 0}; }
  void end_step() override {}

  void get_rows(const DeviceMatrix& table, DeviceSpan ids, int64_t n, DeviceSpan out) override {
    const int32_t* id = ids.host<const int32_t>();
    for (int64_t t = 0; t < n; ++t) be_.get_row(table.view, id[t], out.host<float>() + t * table.view.n_cols);
  }
  void gather_rows(DeviceSpan x, DeviceSpan rows, int64_t n, int64_t dim, DeviceSpan out) override {
    const int32_t* row = rows.host<const int32_t>();
    for (int64_t i = 0; i < n; ++i)
      std::memcpy(out.host<float>() + i * dim, x.host<const float>() + row[i] * dim, sizeof(float) * dim);
  }
  void matmul(const DeviceMatrix* ws, int n_mats, DeviceSpan x, const DeviceSpan* ys, int64_t n_tokens,
              Numerics numerics) override {
    assert(pool_ != nullptr && "CPU device ops run between begin_step and end_step");
    constexpr int kMaxMats = 8;
    assert(n_mats >= 1 && n_mats <= kMaxMats);
    if (n_mats == 1) return kernels::matmul(be_, ws[0].view, x.host<const float>(), ys[0].host<float>(), n_tokens,
                                            *pool_, numerics);
    MatrixView views[kMaxMats];
    float* outs[kMaxMats];
    for (int i = 0; i < n_mats; ++i) {
      views[i] = ws[i].view;
      outs[i] = ys[i].host<float>();
    }
    kernels::matmul_shared_input(be_, views, n_mats, x.host<const float>(), outs, n_tokens, *pool_, numerics);
  }
  void matmul_grouped(const DeviceGroupedMatmul& g, DeviceSpan x, const DeviceSpan* ys, DeviceSpan gather,
                      Numerics numerics) override {
    assert(pool_ != nullptr && "CPU device ops run between begin_step and end_step");
    if (be_.matmul_grouped == nullptr) return Device::matmul_grouped(g, x, ys, gather, numerics);
    constexpr int kMaxMats = 8;
    assert(g.n_mats >= 1 && g.n_mats <= kMaxMats);
    const size_t n_views = static_cast<size_t>(g.n_groups) * static_cast<size_t>(g.n_mats);
    if (grouped_views_.size() < n_views) grouped_views_.resize(n_views);
    for (size_t i = 0; i < n_views; ++i) grouped_views_[i] = g.ws[i].view;
    float* outs[kMaxMats];
    for (int i = 0; i < g.n_mats; ++i) outs[i] = ys[i].host<float>();
    const GroupedMatmul job{grouped_views_.data(), g.n_mats, g.n_groups, g.offsets, g.in_rows.host<const int32_t>(),
                            x.host<const float>(), outs};
    be_.matmul_grouped(job, *pool_, numerics);
  }
  void rms_norm(DeviceSpan x, DeviceSpan weight, DeviceSpan y, int64_t n_tokens, int64_t dim, float eps) override {
    be_.rms_norm(x.host<const float>(), weight.host<const float>(), y.host<float>(), n_tokens, dim, eps);
  }
  void rope(DeviceSpan x, DeviceSpan positions, int64_t n_tokens, const RopeParams& p) override {
    be_.rope(x.host<float>(), positions.host<const int32_t>(), n_tokens, p);
  }
  void swiglu(DeviceSpan gate, DeviceSpan up, DeviceSpan out, int64_t n) override {
    be_.swiglu(gate.host<const float>(), up.host<const float>(), out.host<float>(), n);
  }
  void geglu(DeviceSpan gate, DeviceSpan up, DeviceSpan out, int64_t n) override {
    be_.geglu(gate.host<const float>(), up.host<const float>(), out.host<float>(), n);
  }
  // One loop for every ISA (a few thousand elements per token of a mixture of experts); it is the reference.
  void swiglu_oai(DeviceSpan gate, DeviceSpan up, DeviceSpan out, int64_t n, float alpha, float limit) override {
    const float* g = gate.host<const float>();
    const float* u = up.host<const float>();
    float* o = out.host<float>();
    for (int64_t i = 0; i < n; ++i) {
      const float x = std::min(g[i], limit);
      const float y = std::clamp(u[i], -limit, limit);
      o[i] = x / (1.0f + std::exp(-alpha * x)) * (y + 1.0f);
    }
  }
  void scale(DeviceSpan x, int64_t n, float factor) override {
    float* v = x.host<float>();
    for (int64_t i = 0; i < n; ++i) v[i] *= factor;
  }
  void add(DeviceSpan y, DeviceSpan x, int64_t n) override { be_.add(y.host<float>(), x.host<const float>(), n); }
  void add_bias(DeviceSpan x, DeviceSpan bias, int64_t n_tokens, int64_t n) override {
    be_.add_bias(x.host<float>(), bias.host<const float>(), n_tokens, n);
  }
  // One loop for every ISA: memory-bound, and the compiler vectorises the row.
  void add_rows_scaled(DeviceSpan y, DeviceSpan x, DeviceSpan rows, DeviceSpan scales, int64_t n,
                       int64_t dim) override {
    const int32_t* row = rows.host<const int32_t>();
    const float* scale = scales.host<const float>();
    for (int64_t i = 0; i < n; ++i) {
      float* dst = y.host<float>() + row[i] * dim;
      const float* src = x.host<const float>() + i * dim;
      for (int64_t c = 0; c < dim; ++c) dst[c] += scale[i] * src[c];
    }
  }
  void add_lora_deltas(const DeviceLoraDeltas& job) override {
    assert(pool_ != nullptr && "CPU device ops run between begin_step and end_step");
    const size_t n_pairs = static_cast<size_t>(job.n_groups) * static_cast<size_t>(job.n_targets);
    if (lora_pairs_.size() < n_pairs) lora_pairs_.resize(n_pairs);
    bool fusable = be_.add_lora_deltas != nullptr;
    for (size_t k = 0; k < n_pairs && fusable; ++k) {
      const DeviceLoraPair& p = job.pairs[k];
      lora_pairs_[k] = p.a != nullptr ? LoraPairView{p.a->view, p.b->view, p.scale} : LoraPairView{};
      if (p.a != nullptr) fusable = is_plain_float(p.a->view) && is_plain_float(p.b->view);
    }
    if (!fusable) return Device::add_lora_deltas(job);
    lora_outs_.resize(static_cast<size_t>(job.n_targets));
    for (int i = 0; i < job.n_targets; ++i) lora_outs_[static_cast<size_t>(i)] = job.ys[i].host<float>();
    const LoraDeltas fused{job.x.host<const float>(), job.n_in,      job.n_groups,      job.offsets,
                           job.rows.host<const int32_t>(), job.n_targets, lora_pairs_.data(), lora_outs_.data(),
                           job.h.host<float>(),     job.max_rank};
    be_.add_lora_deltas(fused, *pool_);
  }
  void kv_write(const DeviceKvLayer& kv, DeviceSpan slot_mapping, DeviceSpan k, DeviceSpan v,
                int64_t n_tokens) override {
    be_.kv_write(host_layer(kv), slot_mapping.host<const int64_t>(), k.host<const float>(), v.host<const float>(),
                 n_tokens);
  }
  void attention(DeviceSpan q, DeviceSpan out, const DeviceKvLayer& kv, const DeviceAttentionBatch& batch,
                 int n_heads, float scale) override {
    assert(pool_ != nullptr && "CPU device ops run between begin_step and end_step");
    const AttentionBatch b{batch.n_tokens, batch.positions.host<const int32_t>(), batch.seq_idx.host<const int32_t>(),
                           batch.block_tables.host<const int32_t>(), batch.max_blocks_per_seq, batch.window,
                           batch.softcap, batch.sinks.host<const float>()};
    be_.attention(q.host<const float>(), out.host<float>(), host_layer(kv), b, n_heads, scale, *pool_);
  }

 private:
  // What the fused LoRA kernels read: float rows in GGUF layout.
  static bool is_plain_float(const MatrixView& m) {
    return m.packing == 0 && (m.dtype == DType::F32 || m.dtype == DType::F16 || m.dtype == DType::BF16);
  }
  static KvLayerView host_layer(const DeviceKvLayer& kv) {
    return KvLayerView{kv.k.ptr, kv.v.ptr, kv.dtype, kv.n_kv_heads, kv.head_dim, kv.block_size};
  }

  const Backend& be_;
  ThreadPool* pool_ = nullptr;
  std::vector<MatrixView> grouped_views_;  // matmul_grouped's weights as views (grown, then reused)
  std::vector<LoraPairView> lora_pairs_;   // add_lora_deltas' pairs as views (grown, then reused)
  std::vector<float*> lora_outs_;
  // Under mutex_.
  void own(std::shared_ptr<void> mem, uint64_t bytes) {
    void* key = mem.get();
    owned_.emplace(key, Owned{std::move(mem), bytes});
    bytes_in_use_ += bytes;
  }
  void disown(void* ptr) {
    const auto it = owned_.find(ptr);
    if (it == owned_.end()) return;
    bytes_in_use_ -= it->second.bytes;
    owned_.erase(it);
  }

  struct Owned {
    std::shared_ptr<void> mem;
    uint64_t bytes = 0;
  };
  mutable std::mutex mutex_;
  std::unordered_map<void*, Owned> owned_;
  uint64_t bytes_in_use_ = 0;
};

}  // namespace

std::shared_ptr<Device> make_cpu_device(const Backend* backend) {
  return std::make_shared<CpuDevice>(backend ? *backend : best_cpu_backend());
}

}  // namespace kairo::kernels
