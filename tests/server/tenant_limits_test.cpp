// Named API keys from --api-keys-file over the real server: the engine request carries the key's tenant and weight,
// each limit answers with the status and message that name it (429 concurrency / tokens per minute, 403 model),
// /metrics counts per key name and never shows a key, and a reload (the call SIGHUP makes, and SIGHUP itself)
// swaps the keys at once or keeps them when the file is bad.
#include <csignal>
#include <cstdio>
#include <fstream>
#include <future>
#include <thread>

#include "server_fixture.h"

namespace kairo::server::testing {
namespace {

using json = nlohmann::json;

bool has_line(const std::string& text, const std::string& line) {
  return text.find("\n" + line + "\n") != std::string::npos || text.rfind(line + "\n", 0) == 0;
}

const std::string kKeysJson = R"({"keys": [
  {"name": "team-a", "key": "sk-a-secret", "max_concurrent_requests": 1, "priority": "high",
   "models": ["demo-alias"]},
  {"name": "team-b", "key": "sk-b-secret", "tokens_per_minute": 60, "weight": 2.5},
  {"name": "lora-only", "key": "sk-c-secret", "models": ["my-lora"]},
  {"name": "we\"ird\\name", "key": "sk-d-secret", "priority": "low"}]})";

const std::vector<std::string> kA = {"Authorization: Bearer sk-a-secret"};
const std::vector<std::string> kB = {"Authorization: Bearer sk-b-secret"};
const std::vector<std::string> kC = {"Authorization: Bearer sk-c-secret"};
const std::vector<std::string> kD = {"Authorization: Bearer sk-d-secret"};

class TenantTest : public ServerTest {
 protected:
  void start_with(const std::string& keys_json, FakeEngineConfig engine = {}) {
    path_ = ::testing::TempDir() + "/kairo_tenant_keys_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".json";
    write_keys(keys_json);
    ServerConfig c = test_config();
    c.api_keys_file = path_;
    c.api_keys = {"sk-plain"};
    start(c, engine);
  }
  void write_keys(const std::string& text) {
    std::ofstream out(path_, std::ios::trunc);
    out << text;
  }
  void TearDown() override {
    ServerTest::TearDown();
    if (!path_.empty()) std::remove(path_.c_str());
  }
  std::string metrics() { return get("/metrics", kA).body; }
  // Polls /metrics until the line is there (a released seat shows up once the response has gone out).
  bool wait_for_metric(const std::string& line) {
    for (int i = 0; i < 500; ++i) {
      if (has_line(metrics(), line)) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  }

  std::string path_;
};

TEST_F(TenantTest, EngineRequestCarriesTheKeysTenantAndWeight) {
  start_with(kKeysJson);
  const json body = {{"prompt", "hi"}, {"max_tokens", 1}};
  ASSERT_EQ(post("/v1/completions", body, kA).status, 200);
  ASSERT_EQ(post("/v1/chat/completions", {{"messages", {{{"role", "user"}, {"content", "hi"}}}}, {"max_tokens", 1}},
                 kB).status,
            200);
  ASSERT_EQ(post("/v1/completions", body, kD).status, 200);
  ASSERT_EQ(post("/v1/completions", body, {"Authorization: Bearer sk-plain"}).status, 200);
  EXPECT_EQ(post("/v1/completions", body, {"Authorization: Bearer sk-a-secre"}).status, 401);
  EXPECT_EQ(post("/v1/completions", body).status, 401);
  const auto submitted = engine_->submitted();
  ASSERT_EQ(submitted.size(), 4u);
  EXPECT_EQ(submitted[0].tenant, "team-a");
  EXPECT_EQ(submitted[0].tenant_weight, 4.0);  // "high"
  EXPECT_EQ(submitted[1].tenant, "team-b");
  EXPECT_EQ(submitted[1].tenant_weight, 2.5);  // its own weight
  EXPECT_EQ(submitted[2].tenant, "we\"ird\\name");
  EXPECT_EQ(submitted[2].tenant_weight, 0.25);  // "low"
  EXPECT_EQ(submitted[3].tenant, "");           // --api-key: the anonymous tenant
  EXPECT_EQ(submitted[3].tenant_weight, 1.0);
}

TEST_F(TenantTest, ConcurrencyLimitCountsARequestOnceAndReleasesItOnEveryPath) {
  start_with(kKeysJson, FakeEngineConfig{.manual = true});
  // team-a may have 1 request in flight; n = 2 choices are one request.
  Connection held(port_);
  ASSERT_TRUE(held.send(format_request("POST", "/v1/completions",
                                       json{{"prompt", {1, 300}}, {"max_tokens", 2}, {"n", 2}, {"stream", true}}.dump(),
                                       kA)));
  ASSERT_TRUE(engine_->wait_for([](const FakeEngine& e) { return e.n_active() == 2; }));
  auto head = held.read_head();
  ASSERT_TRUE(head.has_value());
  EXPECT_EQ(head->status, 200);

  auto r = post("/v1/completions", {{"prompt", {1, 301}}, {"max_tokens", 1}}, kA);
  ASSERT_EQ(r.status, 429);
  EXPECT_EQ(r.header("retry-after"), "1");
  EXPECT_EQ(r.json(),
            (json{{"error",
                   {{"message", "key 'team-a' has 1 request in flight, its max_concurrent_requests limit; retry "
                                "when one finishes"},
                    {"type", "rate_limit_error"},
                    {"param", nullptr},
                    {"code", "tenant_concurrency_limit"}}}}));
  EXPECT_EQ(engine_->submitted().size(), 2u);  // the refused one never reached the engine
  EXPECT_TRUE(has_line(metrics(), "kairo:tenant_requests_in_flight{model_name=\"demo\",tenant=\"team-a\"} 1"));

  // The stream ends: the seat is free again.
  engine_->step(2);
  while (held.read_chunk()) {
  }
  ASSERT_TRUE(wait_for_metric("kairo:tenant_requests_in_flight{model_name=\"demo\",tenant=\"team-a\"} 0"));

  // A client that leaves mid-stream frees it too (once the engine has aborted its request).
  {
    Connection leaving(port_);
    ASSERT_TRUE(leaving.send(format_request(
        "POST", "/v1/completions", json{{"prompt", {1, 302}}, {"max_tokens", 50}, {"stream", true}}.dump(), kA)));
    ASSERT_TRUE(engine_->wait_for([](const FakeEngine& e) { return e.n_active() == 1; }));
    ASSERT_TRUE(leaving.read_head().has_value());
  }
  ASSERT_TRUE(engine_->wait_for([](const FakeEngine& e) { return e.aborted().size() == 1 && e.n_active() == 0; }));
  ASSERT_TRUE(wait_for_metric("kairo:tenant_requests_in_flight{model_name=\"demo\",tenant=\"team-a\"} 0"));

  // A non-streaming request after it is admitted.
  Connection next(port_);
  ASSERT_TRUE(next.send(format_request("POST", "/v1/completions",
                                       json{{"prompt", {1, 303}}, {"max_tokens", 1}}.dump(), kA)));
  ASSERT_TRUE(engine_->wait_for([](const FakeEngine& e) { return e.n_active() == 1; }));
  engine_->step(1);
  auto done = next.read_response();
  ASSERT_TRUE(done.has_value());
  EXPECT_EQ(done->status, 200);
  ASSERT_TRUE(wait_for_metric("kairo:tenant_requests_in_flight{model_name=\"demo\",tenant=\"team-a\"} 0"));
  const std::string m = metrics();
  EXPECT_TRUE(has_line(m, "kairo:tenant_requests_total{model_name=\"demo\",tenant=\"team-a\"} 3")) << m;
  EXPECT_TRUE(has_line(
      m, "kairo:tenant_requests_rejected_total{model_name=\"demo\",tenant=\"team-a\",limit=\"concurrency\"} 1"));
}

TEST_F(TenantTest, TokenRateLimitAnswers429WithRetryAfter) {
  start_with(kKeysJson);
  // team-b: 60 tokens per minute (1 per second). 3 prompt + 100 generated tokens put it 43 in debt.
  const json body = {{"prompt", {1, 300, 301}}, {"max_tokens", 100}};
  auto first = post("/v1/completions", body, kB);
  ASSERT_EQ(first.status, 200);
  ASSERT_EQ(first.json()["usage"]["completion_tokens"], 100);
  auto r = post("/v1/completions", body, kB);
  ASSERT_EQ(r.status, 429);
  const int retry = std::stoi(r.header("retry-after"));
  EXPECT_GE(retry, 41);  // 43 tokens of debt at 1 per second, less the time the requests took
  EXPECT_LE(retry, 44);
  EXPECT_EQ(r.json()["error"]["message"],
            "key 'team-b' has used up its tokens_per_minute limit of 60 (prompt plus generated tokens); retry in " +
                std::to_string(retry) + " s");
  EXPECT_EQ(r.json()["error"]["code"], "tenant_token_rate_limit");
  EXPECT_EQ(r.json()["error"]["type"], "rate_limit_error");
  // Other keys are not affected.
  EXPECT_EQ(post("/v1/completions", body, kD).status, 200);
  const std::string m = metrics();
  EXPECT_TRUE(has_line(m, "kairo:tenant_prompt_tokens_total{model_name=\"demo\",tenant=\"team-b\"} 3")) << m;
  EXPECT_TRUE(has_line(m, "kairo:tenant_generation_tokens_total{model_name=\"demo\",tenant=\"team-b\"} 100"));
  EXPECT_TRUE(has_line(
      m, "kairo:tenant_requests_rejected_total{model_name=\"demo\",tenant=\"team-b\",limit=\"tokens_per_minute\"} 1"));
  EXPECT_EQ(engine_->submitted().size(), 2u);
}

TEST_F(TenantTest, ModelTheKeyMayNotUseIs403) {
  start_with(kKeysJson);
  const json body = {{"prompt", "hi"}, {"max_tokens", 1}, {"model", "demo"}};
  auto r = post("/v1/completions", body, kC);
  ASSERT_EQ(r.status, 403);
  EXPECT_EQ(r.json(), (json{{"error",
                             {{"message", "key 'lora-only' may not use model 'demo'; it may use: 'my-lora'"},
                              {"type", "permission_error"},
                              {"param", "model"},
                              {"code", "model_not_allowed"}}}}));
  // No `model`: the served one, also refused.
  r = post("/v1/chat/completions", {{"messages", {{{"role", "user"}, {"content", "hi"}}}}}, kC);
  ASSERT_EQ(r.status, 403);
  EXPECT_EQ(r.json()["error"]["message"], "key 'lora-only' may not use model 'demo'; it may use: 'my-lora'");
  r = post("/v1/completions", {{"prompt", "hi"}, {"model", "demo'\n"}}, kC);  // not served: 404 before 403
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(get("/v1/models/demo", kC).status, 403);
  EXPECT_EQ(get("/v1/models", kC).json(), (json{{"object", "list"}, {"data", json::array()}}));
  EXPECT_TRUE(engine_->submitted().empty());
  // team-a lists "demo-alias": the served model under any of its names.
  EXPECT_EQ(post("/v1/completions", body, kA).status, 200);
  EXPECT_EQ(get("/v1/models/demo", kA).status, 200);
  EXPECT_EQ(get("/v1/models", kA).json()["data"].size(), 2u);
  EXPECT_TRUE(has_line(
      metrics(), "kairo:tenant_requests_rejected_total{model_name=\"demo\",tenant=\"lora-only\",limit=\"model\"} 3"));
}

TEST_F(TenantTest, MetricsAreLabelledByNameNeverByKey) {
  start_with(kKeysJson);
  ASSERT_EQ(post("/v1/completions", {{"prompt", {1, 300}}, {"max_tokens", 4}}, kD).status, 200);
  const std::string m = metrics();
  const std::string weird = "tenant=\"we\\\"ird\\\\name\"";  // escaped as the text format says: \" and backslash
  EXPECT_TRUE(has_line(m, "kairo:tenant_requests_total{model_name=\"demo\"," + weird + "} 1")) << m;
  EXPECT_TRUE(has_line(m, "kairo:tenant_prompt_tokens_total{model_name=\"demo\"," + weird + "} 2"));
  EXPECT_TRUE(has_line(m, "kairo:tenant_generation_tokens_total{model_name=\"demo\"," + weird + "} 4"));
  EXPECT_TRUE(has_line(m, "kairo:tenant_requests_in_flight{model_name=\"demo\"," + weird + "} 0"));
  // Every key of the file has its series from the start, at zero.
  EXPECT_TRUE(has_line(m, "kairo:tenant_requests_total{model_name=\"demo\",tenant=\"lora-only\"} 0"));
  EXPECT_TRUE(has_line(m, "# TYPE kairo:tenant_requests_total counter"));
  EXPECT_TRUE(has_line(m, "# TYPE kairo:tenant_requests_in_flight gauge"));
  for (const char* secret : {"sk-a-secret", "sk-b-secret", "sk-c-secret", "sk-d-secret", "sk-plain"}) {
    EXPECT_EQ(m.find(secret), std::string::npos) << secret;
  }
  // The anonymous tenant has no series of its own.
  EXPECT_EQ(m.find("tenant=\"\""), std::string::npos);
}

TEST_F(TenantTest, ReloadSwapsTheKeysAndABadFileKeepsThem) {
  start_with(kKeysJson);
  const json body = {{"prompt", "hi"}, {"max_tokens", 1}};
  ASSERT_EQ(post("/v1/completions", body, kA).status, 200);
  write_keys(R"({"keys": [{"name": "team-new", "key": "sk-new"}]})");
  auto n = server_->reload_api_keys();
  ASSERT_TRUE(n.ok()) << n.error().message;
  EXPECT_EQ(*n, 1u);
  EXPECT_EQ(post("/v1/completions", body, kA).status, 401);
  EXPECT_EQ(post("/v1/completions", body, {"Authorization: Bearer sk-new"}).status, 200);
  EXPECT_EQ(post("/v1/completions", body, {"Authorization: Bearer sk-plain"}).status, 200);  // --api-key stays

  write_keys(R"({"keys": [{"name": "team-x", "key": "sk-x", "max_concurrent_requests": -2}]})");
  auto bad = server_->reload_api_keys();
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message,
            "keys file " + path_ + ": keys[0] (\"team-x\"): \"max_concurrent_requests\" is -2; use a count from 1 up, "
                                   "or 0 (or leave it out) for no limit");
  EXPECT_EQ(post("/v1/completions", body, {"Authorization: Bearer sk-new"}).status, 200);
  EXPECT_EQ(post("/v1/completions", body, {"Authorization: Bearer sk-x"}).status, 401);
  // A key that is also an --api-key is refused the same way.
  write_keys(R"({"keys": [{"name": "dup", "key": "sk-plain"}]})");
  EXPECT_FALSE(server_->reload_api_keys().ok());
  EXPECT_EQ(post("/v1/completions", body, {"Authorization: Bearer sk-new"}).status, 200);

  const auto submitted = engine_->submitted();
  ASSERT_EQ(submitted.size(), 5u);
  EXPECT_EQ(submitted[1].tenant, "team-new");
  // Removed names keep their counters.
  const std::string m = get("/metrics", {"Authorization: Bearer sk-new"}).body;
  EXPECT_TRUE(has_line(m, "kairo:tenant_requests_total{model_name=\"demo\",tenant=\"team-a\"} 1")) << m;
  EXPECT_TRUE(has_line(m, "kairo:tenant_requests_total{model_name=\"demo\",tenant=\"team-new\"} 3"));
}

TEST_F(TenantTest, SighupReloadsTheKeysFile) {
  start_with(kKeysJson);
  std::promise<void> ready;
  auto running = std::async(std::launch::async, [&] { return server_->run_until_signal([&] { ready.set_value(); }); });
  ready.get_future().wait();
  write_keys(R"({"keys": [{"name": "team-new", "key": "sk-new"}]})");
  ASSERT_EQ(std::raise(SIGHUP), 0);
  const json body = {{"prompt", "hi"}, {"max_tokens", 1}};
  bool reloaded = false;
  for (int i = 0; i < 500 && !reloaded; ++i) {
    reloaded = post("/v1/completions", body, {"Authorization: Bearer sk-new"}).status == 200;
    if (!reloaded) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(reloaded);
  EXPECT_EQ(post("/v1/completions", body, kA).status, 401);
  // A bad file on SIGHUP: the server goes on with the keys it has.
  write_keys("{not json");
  ASSERT_EQ(std::raise(SIGHUP), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(post("/v1/completions", body, {"Authorization: Bearer sk-new"}).status, 200);
  EXPECT_TRUE(server_->stop());
  EXPECT_TRUE(running.get());
}

// While the model loads (after start(), before run_until_signal()), a SIGHUP neither ends the process (its default
// action) nor is lost: the reload runs once the server is ready.
TEST_F(TenantTest, SighupWhileLoadingReloadsOnceReady) {
  start_with(kKeysJson);
  write_keys(R"({"keys": [{"name": "team-new", "key": "sk-new"}]})");
  ASSERT_EQ(std::raise(SIGHUP), 0);
  const json body = {{"prompt", "hi"}, {"max_tokens", 1}};
  std::promise<void> ready;
  auto running = std::async(std::launch::async, [&] { return server_->run_until_signal([&] { ready.set_value(); }); });
  ready.get_future().wait();
  bool reloaded = false;
  for (int i = 0; i < 500 && !reloaded; ++i) {
    reloaded = post("/v1/completions", body, {"Authorization: Bearer sk-new"}).status == 200;
    if (!reloaded) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(reloaded);
  EXPECT_EQ(post("/v1/completions", body, kA).status, 401);
  EXPECT_TRUE(server_->stop());
  EXPECT_TRUE(running.get());
}

TEST(TenantStartTest, BadKeysFileFailsStart) {
  const std::string path = ::testing::TempDir() + "/kairo_tenant_keys_bad.json";
  {
    std::ofstream out(path);
    out << R"({"keys": [{"name": "a", "key": "k", "priority": "urgent"}]})";
  }
  ServerConfig c = test_config();
  c.api_keys_file = path;
  Server server(c, test_model());
  const Status s = server.start();
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message,
            "keys file " + path + ": keys[0] (\"a\"): \"priority\" must be \"high\", \"normal\" or \"low\", got "
                                  "\"urgent\"");
  std::remove(path.c_str());
}

}  // namespace
}  // namespace kairo::server::testing
