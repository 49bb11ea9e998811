// Request and server lifecycles: readiness, client disconnects abort engine requests, a full engine queue gives 429,
// graceful stop drains in-flight streams, and a stop past the timeout cancels them.
#include <future>
#include <thread>

#include "server_fixture.h"

namespace kairo::server::testing {
namespace {

using json = nlohmann::json;

bool contains(const std::vector<engine::RequestId>& ids, engine::RequestId id) {
  return std::find(ids.begin(), ids.end(), id) != ids.end();
}

class ManualEngineTest : public ServerTest {
 protected:
  void SetUp() override { start(test_config(), FakeEngineConfig{.max_active = 2, .manual = true}); }
};

TEST(ReadinessTest, HealthIs503UntilTheEngineIsAttached) {
  FakeEngine engine(demo_tokenizer(), {});
  Server server(test_config(), test_model());
  ASSERT_TRUE(server.start().ok());
  auto r = request(server.port(), "GET", "/health");
  EXPECT_EQ(r.status, 503);
  EXPECT_EQ(r.json(), (json{{"status", "loading"}}));
  r = post_json(server.port(), "/v1/completions", {{"prompt", "x"}});
  EXPECT_EQ(r.status, 503);
  EXPECT_EQ(r.header("retry-after"), "1");
  EXPECT_EQ(r.json()["error"]["code"], "model_loading");
  EXPECT_EQ(request(server.port(), "GET", "/metrics").status, 200);  // scrapeable while loading
  server.attach(engine, demo_tokenizer());
  EXPECT_EQ(request(server.port(), "GET", "/health").status, 200);
  EXPECT_EQ(post_json(server.port(), "/v1/completions", {{"prompt", "x"}, {"max_tokens", 1}}).status, 200);
  EXPECT_TRUE(server.stop());
}

TEST(ReadinessTest, ListenErrorNamesTheAddress) {
  Server first(test_config(), test_model());
  ASSERT_TRUE(first.start().ok());
  ServerConfig c = test_config();
  c.port = first.port();
  Server second(c, test_model());
  const Status s = second.start();
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message.rfind("cannot listen on 127.0.0.1:" + std::to_string(c.port) + ": ", 0), 0u)
      << s.error().message;
}

TEST_F(ManualEngineTest, ClientDisconnectMidStreamAbortsTheEngineRequest) {
  Connection c(port_);
  ASSERT_TRUE(c.send(format_request("POST", "/v1/completions",
                                    json{{"prompt", {1, 300}}, {"max_tokens", 100}, {"stream", true}}.dump())));
  ASSERT_TRUE(engine_->wait_for([](const FakeEngine& e) { return e.n_active() == 1; }));
  auto head = c.read_head();
  ASSERT_TRUE(head.has_value());
  EXPECT_EQ(head->status, 200);
  engine_->step(3);
  for (int i = 0; i < 3; ++i) {
    auto chunk = c.read_chunk();
    ASSERT_TRUE(chunk.has_value());
    EXPECT_EQ(chunk->rfind("data: {", 0), 0u);
  }
  c.close();
  ASSERT_TRUE(engine_->wait_for([](const FakeEngine& e) { return contains(e.aborted(), 1); }));
  ASSERT_TRUE(engine_->wait_for([](const FakeEngine& e) { return e.n_active() == 0; }));
  EXPECT_EQ(engine_->stats().kv_usage, 0.0);
  ASSERT_TRUE(engine_->wait_for([&](const FakeEngine&) { return server_->n_inflight() == 0; }));
  EXPECT_EQ(server_->metrics().finished_total(engine::FinishReason::Abort), 1);
}

TEST_F(ManualEngineTest, ClientDisconnectDuringANonStreamingRequestAbortsIt) {
  Connection c(port_);
  ASSERT_TRUE(c.send(format_request("POST", "/v1/chat/completions",
                                    json{{"messages", {{{"role", "user"}, {"content", "hi"}}}}, {"max_tokens", 50}}
                                        .dump())));
  ASSERT_TRUE(engine_->wait_for([](const FakeEngine& e) { return e.n_active() == 1; }));
  engine_->step(2);
  c.close();
  ASSERT_TRUE(engine_->wait_for([](const FakeEngine& e) { return contains(e.aborted(), 1) && e.n_active() == 0; }));
}

TEST_F(ManualEngineTest, ALostDeviceFailsRequestsInFlightAndHealthSaysSo) {
  Connection streaming(port_), plain(port_);
  ASSERT_TRUE(streaming.send(format_request("POST", "/v1/completions",
                                            json{{"prompt", {1, 300}}, {"max_tokens", 50}, {"stream", true}}.dump())));
  ASSERT_TRUE(plain.send(format_request("POST", "/v1/completions", json{{"prompt", {1, 300}}, {"max_tokens", 50}}
                                                                        .dump())));
  ASSERT_TRUE(engine_->wait_for([](const FakeEngine& e) { return e.n_active() == 2; }));
  auto head = streaming.read_head();
  ASSERT_TRUE(head.has_value());
  engine_->step(2);
  const std::string error = "the device vulkan:0 failed (VK_ERROR_DEVICE_LOST): restart the server";
  engine_->fail_device(error);

  const auto answer = plain.read_response();
  ASSERT_TRUE(answer.has_value());
  EXPECT_EQ(answer->status, 500);
  EXPECT_EQ(answer->json()["error"]["message"], error);
  EXPECT_EQ(answer->json()["error"]["code"], "device_failed");
  std::string events;
  for (auto chunk = streaming.read_chunk(); chunk && !chunk->empty(); chunk = streaming.read_chunk()) events += *chunk;
  EXPECT_NE(events.find(error), std::string::npos) << events;
  EXPECT_NE(events.find("data: [DONE]"), std::string::npos) << events;

  const auto health = get("/health");
  EXPECT_EQ(health.status, 503);
  EXPECT_EQ(health.json()["status"], "device_failed");
  EXPECT_EQ(health.json()["error"], error);
  const auto refused = post("/v1/completions", {{"prompt", {1, 300}}, {"max_tokens", 5}});
  EXPECT_EQ(refused.status, 503);
  EXPECT_EQ(refused.json()["error"]["message"], error);
}

TEST_F(ManualEngineTest, HealthNamesTheKindOfFailureThatStoppedTheEngine) {
  // A broken KV/scheduler invariant is a bug in kairo, memory that ran out is a sizing problem, a lost device is
  // hardware: an operator (or an orchestrator's probe) acts differently on each, so each is its own status.
  const std::string error = "internal error: the engine's KV bookkeeping broke an invariant (block 3 freed twice)";
  engine_->fail_device(error, engine::FailureKind::BrokenInvariant);
  const auto health = get("/health");
  EXPECT_EQ(health.status, 503);
  EXPECT_EQ(health.json()["status"], "invariant_failed");
  EXPECT_EQ(health.json()["error"], error);
  const auto refused = post("/v1/completions", {{"prompt", {1, 300}}, {"max_tokens", 5}});
  EXPECT_EQ(refused.status, 503);
  EXPECT_EQ(refused.json()["error"]["message"], error);
}

TEST_F(ManualEngineTest, HealthSaysOutOfMemoryWhenAStepRanOutOfMemory) {
  const std::string error = "a step of 512 tokens ran out of memory on cpu: ...";
  engine_->fail_device(error, engine::FailureKind::OutOfMemory);
  const auto health = get("/health");
  EXPECT_EQ(health.status, 503);
  EXPECT_EQ(health.json()["status"], "out_of_memory");
  EXPECT_EQ(health.json()["error"], error);
}

TEST(FailureStatus, EachKindHasItsOwnHealthStatus) {
  EXPECT_STREQ(engine::failure_status(engine::FailureKind::None), "ok");
  EXPECT_STREQ(engine::failure_status(engine::FailureKind::DeviceLost), "device_failed");
  EXPECT_STREQ(engine::failure_status(engine::FailureKind::OutOfMemory), "out_of_memory");
  EXPECT_STREQ(engine::failure_status(engine::FailureKind::BrokenInvariant), "invariant_failed");
}

TEST_F(ManualEngineTest, FullQueueGives429WithRetryAfter) {
  Connection c1(port_), c2(port_);
  const std::string body = json{{"prompt", {1, 300}}, {"max_tokens", 5}}.dump();
  ASSERT_TRUE(c1.send(format_request("POST", "/v1/completions", body)));
  ASSERT_TRUE(c2.send(format_request("POST", "/v1/completions", body)));
  ASSERT_TRUE(engine_->wait_for([](const FakeEngine& e) { return e.n_active() == 2; }));
  const auto r = post("/v1/completions", {{"prompt", {1, 300}}, {"max_tokens", 5}});
  ASSERT_EQ(r.status, 429);
  EXPECT_EQ(r.header("retry-after"), "1");
  EXPECT_EQ(r.json()["error"]["type"], "rate_limit_error");
  EXPECT_EQ(r.json()["error"]["code"], "rate_limit_exceeded");
  EXPECT_EQ(r.json()["error"]["message"], "the server is at capacity (2 requests are queued); retry after 1 s");
  engine_->step(5);
  EXPECT_EQ(c1.read_response()->status, 200);
  EXPECT_EQ(c2.read_response()->status, 200);
}

TEST_F(ManualEngineTest, PartlyRefusedNChoicesAbortTheAcceptedOnes) {
  Connection c1(port_);
  ASSERT_TRUE(c1.send(format_request("POST", "/v1/completions",
                                     json{{"prompt", {1, 300}}, {"max_tokens", 5}}.dump())));
  ASSERT_TRUE(engine_->wait_for([](const FakeEngine& e) { return e.n_active() == 1; }));
  const auto r = post("/v1/completions", {{"prompt", {1, 300}}, {"max_tokens", 5}, {"n", 3}});
  ASSERT_EQ(r.status, 429);
  // Choice 0 got in (id 2) and was aborted when choice 1 was refused.
  ASSERT_TRUE(engine_->wait_for([](const FakeEngine& e) { return contains(e.aborted(), 2) && e.n_active() == 1; }));
  engine_->step(5);
  EXPECT_EQ(c1.read_response()->status, 200);
  ASSERT_TRUE(engine_->wait_for([&](const FakeEngine&) { return server_->n_inflight() == 0; }));
}

TEST_F(ManualEngineTest, GracefulStopDrainsInFlightStreams) {
  Connection c(port_);
  ASSERT_TRUE(c.send(format_request("POST", "/v1/completions",
                                    json{{"prompt", {1, 300}}, {"max_tokens", 4}, {"stream", true}}.dump())));
  ASSERT_TRUE(engine_->wait_for([](const FakeEngine& e) { return e.n_active() == 1; }));
  ASSERT_TRUE(c.read_head().has_value());
  engine_->step(1);
  auto stopped = std::async(std::launch::async, [&] { return server_->stop(); });
  // New work is refused while the stream drains.
  ASSERT_TRUE(engine_->wait_for([&](const FakeEngine&) {
    Connection probe(port_, 500);
    return !probe.ok() || !probe.send(format_request("GET", "/health")) || !probe.read_response().has_value();
  }));
  engine_->step(3);
  std::string body;
  while (auto chunk = c.read_chunk()) body += *chunk;
  EXPECT_EQ(body.substr(body.size() - 14), "data: [DONE]\n\n");
  EXPECT_TRUE(stopped.get());  // drained without cancelling
  EXPECT_TRUE(c.wait_closed(5000));
  EXPECT_EQ(server_->metrics().finished_total(engine::FinishReason::Length), 1);
}

class ShutdownTimeoutTest : public ServerTest {
 protected:
  void SetUp() override {
    ServerConfig c = test_config();
    c.shutdown_timeout_s = 0.2;
    start(c, FakeEngineConfig{.manual = true});
  }
};

TEST_F(ShutdownTimeoutTest, RequestsStillRunningAtTheTimeoutAreCancelled) {
  Connection plain(port_), streaming(port_);
  ASSERT_TRUE(plain.send(format_request("POST", "/v1/completions",
                                        json{{"prompt", {1, 300}}, {"max_tokens", 50}}.dump())));
  ASSERT_TRUE(streaming.send(format_request("POST", "/v1/completions",
                                            json{{"prompt", {1, 301}}, {"max_tokens", 50}, {"stream", true}}.dump())));
  ASSERT_TRUE(engine_->wait_for([](const FakeEngine& e) { return e.n_active() == 2; }));
  ASSERT_TRUE(streaming.read_head().has_value());
  EXPECT_FALSE(server_->stop());  // the engine never stepped: both had to be cancelled

  auto r = plain.read_response();
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, 503);
  EXPECT_EQ(r->json()["error"]["message"], "the request was cancelled because the server is shutting down");
  std::string events;  // the error event, then [DONE] (HTTP chunks are no events' boundaries)
  while (auto chunk = streaming.read_chunk()) events += *chunk;
  const size_t done = events.find("data: [DONE]\n\n");
  ASSERT_NE(done, std::string::npos) << events;
  EXPECT_EQ(done + 14, events.size());
  EXPECT_EQ(json::parse(events.substr(6, done - 8))["error"]["code"], "shutting_down");
  EXPECT_EQ(engine_->n_active(), 0);
}

TEST_F(ShutdownTimeoutTest, RunUntilSignalReturnsWhenStopped) {
  auto running = std::async(std::launch::async, [&] { return server_->run_until_signal(); });
  EXPECT_TRUE(server_->stop());
  EXPECT_TRUE(running.get());
}

}  // namespace
}  // namespace kairo::server::testing
