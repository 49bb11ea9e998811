// A device that fails mid-serving (a lost GPU): the requests in flight end with the device's error, new requests are
// refused with it, and the engine keeps answering (stats, failure()) instead of crashing.
#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <mutex>

#include "engine/engine.h"
#include "model/model.h"
#include "test_paths.h"
#include "tokenizer/tokenizer.h"

namespace kairo::engine {
namespace {

using kernels::DeviceSpan;

// The CPU device, except that once `fail` is set every step ends in DeviceLost, as a GPU driver reports a lost
// device at its next submission.
class FailingDevice final : public kernels::Device {
 public:
  std::atomic<bool> fail{false};
  std::shared_ptr<kernels::Device> cpu = kernels::make_cpu_device();

  kernels::DeviceKind kind() const override { return kernels::DeviceKind::Vulkan; }
  std::string name() const override { return "failing-test-device"; }
  bool host_memory() const override { return true; }
  Result<DeviceSpan> allocate(uint64_t bytes, const char* what) override { return cpu->allocate(bytes, what); }
  void free(DeviceSpan s) override { cpu->free(s); }
  uint64_t max_allocation_bytes() const override { return cpu->max_allocation_bytes(); }
  void upload(DeviceSpan d, const void* s, uint64_t n) override { cpu->upload(d, s, n); }
  void download(DeviceSpan s, void* d, uint64_t n) override { cpu->download(s, d, n); }
  void copy(DeviceSpan s, DeviceSpan d, uint64_t n) override { cpu->copy(s, d, n); }
  void synchronize() override {}
  kernels::DeviceMemoryInfo memory_info() const override { return cpu->memory_info(); }
  Status check_kv_dtype(DType t) const override { return cpu->check_kv_dtype(t); }
  Result<std::vector<kernels::DeviceMatrix>> upload_matrices(std::span<const kernels::MatrixView> h) override {
    return cpu->upload_matrices(h);
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
  void add(DeviceSpan y, DeviceSpan x, int64_t n) override { cpu->add(y, x, n); }
  void add_bias(DeviceSpan x, DeviceSpan b, int64_t n_tokens, int64_t n) override { cpu->add_bias(x, b, n_tokens, n); }
  void kv_write(const kernels::DeviceKvLayer& kv, DeviceSpan slots, DeviceSpan k, DeviceSpan v,
                int64_t n) override {
    cpu->kv_write(kv, slots, k, v, n);
  }
  void attention(DeviceSpan q, DeviceSpan out, const kernels::DeviceKvLayer& kv,
                 const kernels::DeviceAttentionBatch& b, int n_heads, float scale) override {
    cpu->attention(q, out, kv, b, n_heads, scale);
  }
};

TEST(DeviceFailure, RequestsInFlightEndWithTheErrorAndNewOnesAreRefused) {
  auto device = std::make_shared<FailingDevice>();
  auto model = model::Model::load(testing::shared_path("models/synth-llama-gqa.Q8_0.gguf"), device);
  ASSERT_TRUE(model.ok()) << model.error().message;
  auto tok = tokenizer::Tokenizer::from_gguf((*model)->file());
  ASSERT_TRUE(tok.ok());
  EngineConfig cfg;
  cfg.n_threads = 1;
  auto engine = Engine::create(**model, **tok, cfg);
  ASSERT_TRUE(engine.ok()) << engine.error().message;

  std::mutex mutex;
  std::condition_variable cv;
  int n_tokens = 0;
  bool finished = false;
  RequestOutput last;
  Request r;
  r.prompt_tokens = {1, 10, 11, 12};
  r.sampling.temperature = 0;
  r.stop.max_tokens = 400;
  r.stop.ignore_eos = true;
  auto id = (*engine)->submit(r, [&](const RequestOutput& out) {
    std::lock_guard<std::mutex> lock(mutex);
    n_tokens += static_cast<int>(out.tokens.size());
    if (out.finished) {
      finished = true;
      last = out;
    }
    cv.notify_all();
  });
  ASSERT_TRUE(std::holds_alternative<RequestId>(id));
  {
    std::unique_lock<std::mutex> lock(mutex);
    cv.wait(lock, [&] { return n_tokens >= 3; });  // running normally first
  }
  device->fail = true;
  {
    std::unique_lock<std::mutex> lock(mutex);
    cv.wait(lock, [&] { return finished; });
  }
  EXPECT_EQ(last.finish_reason, FinishReason::Abort);
  EXPECT_NE(last.error.find("the device failing-test-device failed (VK_ERROR_DEVICE_LOST at vkQueueSubmit)"),
            std::string::npos)
      << last.error;
  EXPECT_NE(last.error.find("restart the server"), std::string::npos);
  EXPECT_EQ((*engine)->failure(), last.error);

  auto refused = (*engine)->submit(r, [](const RequestOutput&) {});
  ASSERT_TRUE(std::holds_alternative<SubmitRejection>(refused));
  EXPECT_EQ(std::get<SubmitRejection>(refused).kind, SubmitError::DeviceFailed);
  EXPECT_EQ(std::get<SubmitRejection>(refused).message, last.error);
  EXPECT_EQ((*engine)->stats().n_running, 0);
}

}  // namespace
}  // namespace kairo::engine
