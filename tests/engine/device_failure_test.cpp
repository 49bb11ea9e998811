// A device that fails mid-serving (a lost GPU): the requests in flight end with the device's error, new requests are
// refused with it, and the engine keeps answering (stats, failure()) instead of crashing.
#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <mutex>

#include "engine/engine.h"
#include "fake_device.h"
#include "model/model.h"
#include "test_paths.h"
#include "tokenizer/tokenizer.h"

namespace kairo::engine {
namespace {

TEST(DeviceFailure, RequestsInFlightEndWithTheErrorAndNewOnesAreRefused) {
  auto device = std::make_shared<testing::FakeGpuDevice>();
  auto model = model::Model::load(kairo::testing::shared_path("models/synth-llama-gqa.Q8_0.gguf"), device);
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
  EXPECT_NE(last.error.find("the device fake-gpu failed (VK_ERROR_DEVICE_LOST at vkQueueSubmit)"),
            std::string::npos)
      << last.error;
  EXPECT_NE(last.error.find("restart the server"), std::string::npos);
  EXPECT_EQ((*engine)->failure(), last.error);
  EXPECT_EQ((*engine)->failure_state().kind, FailureKind::DeviceLost);

  auto refused = (*engine)->submit(r, [](const RequestOutput&) {});
  ASSERT_TRUE(std::holds_alternative<SubmitRejection>(refused));
  EXPECT_EQ(std::get<SubmitRejection>(refused).kind, SubmitError::DeviceFailed);
  EXPECT_EQ(std::get<SubmitRejection>(refused).message, last.error);
  EXPECT_EQ((*engine)->stats().n_running, 0);
}

}  // namespace
}  // namespace kairo::engine
