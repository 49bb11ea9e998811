#pragma once
// A stand-in device for the tests of the layers around a device (engine, model loading): it runs on the CPU.
#include <atomic>
#include <memory>
#include <string>

#include "kernels/device.h"

namespace kairo::testing {

using kernels::DeviceSpan;

// The CPU device posing as a GPU for tests of what happens around a device: once `fail` is set every step ends in
// DeviceLost, as a GPU driver reports a lost device at its next submission; `memory_bytes` > 0 makes it report
// memory of its own of that size (the model then checks its weights fit).
class FakeGpuDevice : public kernels::Device {
 public:
  std::atomic<bool> fail{false};
  uint64_t memory_bytes = 0;
  std::shared_ptr<kernels::Device> cpu = kernels::make_cpu_device();

  kernels::DeviceKind kind() const override { return kernels::DeviceKind::Vulkan; }
  std::string name() const override { return "fake-gpu"; }
  bool host_memory() const override { return memory_bytes == 0; }
  Result<DeviceSpan> allocate(uint64_t bytes, const char* what) override { return cpu->allocate(bytes, what); }
  void free(DeviceSpan s) override { cpu->free(s); }
  uint64_t max_allocation_bytes() const override { return cpu->max_allocation_bytes(); }
  void upload(DeviceSpan d, const void* s, uint64_t n) override { cpu->upload(d, s, n); }
  void download(DeviceSpan s, void* d, uint64_t n) override { cpu->download(s, d, n); }
  void copy(DeviceSpan s, DeviceSpan d, uint64_t n) override { cpu->copy(s, d, n); }
  void synchronize() override {}
  kernels::DeviceMemoryInfo memory_info() const override {
    return memory_bytes ? kernels::DeviceMemoryInfo{memory_bytes, memory_bytes / 2, true} : cpu->memory_info();
  }
  uint64_t bytes_in_use() const override { return cpu->bytes_in_use(); }
  Status check_kv_dtype(DType t) const override { return cpu->check_kv_dtype(t); }
  // With memory of its own the model reads one copy of the embedding table for get_rows and the output matmul, as on
  // a GPU: the weights keep the GGUF layout (the CPU device's repacked layouts are for its matmul only).
  Result<std::vector<kernels::DeviceMatrix>> upload_matrices(std::span<const kernels::MatrixView> h) override {
    if (memory_bytes == 0) return cpu->upload_matrices(h);
    std::vector<kernels::DeviceMatrix> out;
    for (const kernels::MatrixView& v : h) out.push_back({v, DeviceSpan{const_cast<void*>(v.data), 0, 0}});
    return out;
  }
  void free_matrices(std::span<const kernels::DeviceMatrix> m) override {
    if (memory_bytes == 0) cpu->free_matrices(m);  // with memory of its own it copied nothing
  }
  void begin_step(ThreadPool& pool) override { cpu->begin_step(pool); }
  DeviceSpan stage(const void* h, uint64_t n) override { return cpu->stage(h, n); }
  void end_step() override {
    if (fail) throw kernels::DeviceLost("VK_ERROR_DEVICE_LOST at vkQueueSubmit");
  }
  void get_rows(const kernels::DeviceMatrix& t, DeviceSpan ids, int64_t n, DeviceSpan out) override {
    cpu->get_rows(t, ids, n, out);
  }
  void gather_rows(DeviceSpan x, DeviceSpan rows, int64_t n, int64_t dim, DeviceSpan out) override {
    cpu->gather_rows(x, rows, n, dim, out);
  }
  void matmul(const kernels::DeviceMatrix* ws, int n_mats, DeviceSpan x, const DeviceSpan* ys, int64_t n_tokens,
              kernels::Numerics numerics) override {
    cpu->matmul(ws, n_mats, x, ys, n_tokens, numerics);
  }
  void rms_norm(DeviceSpan x, DeviceSpan w, DeviceSpan y, int64_t n, int64_t dim, float eps) override {
    cpu->rms_norm(x, w, y, n, dim, eps);
  }
  void rope(DeviceSpan x, DeviceSpan pos, int64_t n, const kernels::RopeParams& p) override { cpu->rope(x, pos, n, p); }
  void swiglu(DeviceSpan g, DeviceSpan u, DeviceSpan o, int64_t n) override { cpu->swiglu(g, u, o, n); }
  void geglu(DeviceSpan g, DeviceSpan u, DeviceSpan o, int64_t n) override { cpu->geglu(g, u, o, n); }
  void scale(DeviceSpan x, int64_t n, float factor) override { cpu->scale(x, n, factor); }
  void swiglu_oai(DeviceSpan g, DeviceSpan u, DeviceSpan o, int64_t n, float alpha, float limit) override {
    cpu->swiglu_oai(g, u, o, n, alpha, limit);
  }
  void add(DeviceSpan y, DeviceSpan x, int64_t n) override { cpu->add(y, x, n); }
  void add_bias(DeviceSpan x, DeviceSpan b, int64_t n_tokens, int64_t n) override { cpu->add_bias(x, b, n_tokens, n); }
  void add_rows_scaled(DeviceSpan y, DeviceSpan x, DeviceSpan rows, DeviceSpan scales, int64_t n,
                       int64_t dim) override {
    cpu->add_rows_scaled(y, x, rows, scales, n, dim);
  }
  void kv_write(const kernels::DeviceKvLayer& kv, DeviceSpan slots, DeviceSpan k, DeviceSpan v,
                int64_t n) override {
    cpu->kv_write(kv, slots, k, v, n);
  }
  void attention(DeviceSpan q, DeviceSpan out, const kernels::DeviceKvLayer& kv,
                 const kernels::DeviceAttentionBatch& b, int n_heads, float scale) override {
    cpu->attention(q, out, kv, b, n_heads, scale);
  }
};

}  // namespace kairo::testing
