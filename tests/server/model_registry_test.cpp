// Several models behind one server (server/model_registry.h), through HTTP: requests routed by `model`, models
// loaded on demand, the least-recently-used idle one unloaded when the memory budget or --max-loaded-models would be
// exceeded, a model serving a request never unloaded under it, a load that cannot make room in time answered 503, a
// failed load 500, the switches in /metrics. The engines are FakeEngines made by the loaders, so a test can hold one
// busy (manual stepping) and see each one destroyed when its model is unloaded.
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include "fake_engine.h"
#include "http_client.h"
#include "server/metrics.h"
#include "server/server.h"
#include "server_fixture.h"

namespace kairo::server::testing {
namespace {

// The loaders' engines, by model id, and how many of each exist now (an unload destroys one).
struct EngineShelf {
  std::mutex mutex;
  std::map<std::string, FakeEngine*> live;
  std::map<std::string, int> n_loads;
  std::map<std::string, int> n_alive;
  std::map<std::string, bool> manual;          // models whose engines step only by hand
  std::chrono::milliseconds callback_release_delay{0};
  std::map<std::string, std::string> failure;  // models whose load fails with this message

  FakeEngine* engine(const std::string& id) {
    std::lock_guard lock(mutex);
    return live.count(id) ? live[id] : nullptr;
  }
  int alive(const std::string& id) {
    std::lock_guard lock(mutex);
    return n_alive[id];
  }
};

struct OwnedEngine {
  std::unique_ptr<FakeEngine> engine;
  std::shared_ptr<EngineShelf> shelf;
  std::string id;
  ~OwnedEngine() {
    engine.reset();
    std::lock_guard lock(shelf->mutex);
    --shelf->n_alive[id];
    shelf->live.erase(id);
  }
};

ModelEntry fake_entry(const std::string& id, uint64_t footprint, const std::shared_ptr<EngineShelf>& shelf) {
  ModelEntry e;
  e.info.id = id;
  e.info.aliases = {id + "-alias"};
  e.info.context_length = 256;
  e.footprint_bytes = footprint;
  e.loader = [id, shelf]() -> Result<LoadedModel> {
    FakeEngineConfig config;
    {
      std::lock_guard lock(shelf->mutex);
      if (shelf->failure.count(id)) return Error{shelf->failure[id]};
      config.manual = shelf->manual[id];
      config.callback_release_delay = shelf->callback_release_delay;
    }
    auto owned = std::make_shared<OwnedEngine>();
    owned->engine = std::make_unique<FakeEngine>(demo_tokenizer(), config);
    owned->shelf = shelf;
    owned->id = id;
    std::lock_guard lock(shelf->mutex);
    ++shelf->n_loads[id];
    ++shelf->n_alive[id];
    shelf->live[id] = owned->engine.get();
    LoadedModel m;
    m.engine = owned->engine.get();
    m.tokenizer = &demo_tokenizer();
    m.owner = owned;
    return m;
  };
  return e;
}

class MultiModelTest : public ::testing::Test {
 protected:
  void start(ModelLimits limits, std::vector<std::pair<std::string, uint64_t>> models) {
    std::vector<ModelEntry> entries;
    for (const auto& [id, footprint] : models) entries.push_back(fake_entry(id, footprint, shelf_));
    server_ = std::make_unique<Server>(test_config(), std::move(entries), limits);
    ASSERT_TRUE(server_->start().ok());
    port_ = server_->port();
  }
  void TearDown() override {
    if (server_) server_->stop();
    server_.reset();
  }
  HttpResult complete(const std::string& model, int max_tokens = 4) {
    return post_json(port_, "/v1/completions", {{"model", model}, {"prompt", "Once upon"}, {"max_tokens", max_tokens}});
  }
  std::string metrics() { return request(port_, "GET", "/metrics").body; }

  std::shared_ptr<EngineShelf> shelf_ = std::make_shared<EngineShelf>();
  std::unique_ptr<Server> server_;
  int port_ = 0;
};

TEST_F(MultiModelTest, RoutesByModelAndUnloadsTheLeastRecentlyUsedUnderTheBudget) {
  // Three models of 100 bytes under a budget of 250: two fit, never three.
  start(ModelLimits{.max_loaded = 0, .budget_bytes = 250, .wait_s = 5}, {{"a", 100}, {"b", 100}, {"c", 100}});
  ASSERT_TRUE(server_->load("a").ok());
  ASSERT_TRUE(server_->load("b").ok());
  EXPECT_EQ(request(port_, "GET", "/health").status, 503) << "not ready before mark_ready";
  server_->mark_ready();
  EXPECT_EQ(request(port_, "GET", "/health").status, 200);

  for (const char* id : {"a", "b", "c"}) {
    const HttpResult r = complete(id);
    ASSERT_EQ(r.status, 200) << id << ": " << r.body;
    EXPECT_EQ(nlohmann::json::parse(r.body)["model"], id);
  }
  // c needed room: a was the least recently used.
  EXPECT_EQ(shelf_->alive("a"), 0);
  EXPECT_EQ(shelf_->alive("b"), 1);
  EXPECT_EQ(shelf_->alive("c"), 1);
  EXPECT_EQ(server_->n_unloads("a"), 1);

  // An alias routes too; a back again unloads b, now the least recently used.
  ASSERT_EQ(complete("a-alias").status, 200);
  EXPECT_EQ(shelf_->alive("a"), 1);
  EXPECT_EQ(shelf_->alive("b"), 0);
  EXPECT_EQ(shelf_->alive("c"), 1);
  EXPECT_EQ(shelf_->n_loads["a"], 2);

  // No `model`: the primary (the first given).
  const HttpResult plain = post_json(port_, "/v1/completions", {{"prompt", "Once"}, {"max_tokens", 2}});
  ASSERT_EQ(plain.status, 200) << plain.body;
  EXPECT_EQ(nlohmann::json::parse(plain.body)["model"], "a");

  const HttpResult unknown = complete("z");
  EXPECT_EQ(unknown.status, 404);
  const std::string message = nlohmann::json::parse(unknown.body)["error"]["message"];
  EXPECT_NE(message.find("\"a\", \"a-alias\", \"b\", \"b-alias\", \"c\""), std::string::npos) << message;

  const auto models = nlohmann::json::parse(request(port_, "GET", "/v1/models").body);
  std::vector<std::string> ids;
  for (const auto& m : models["data"]) ids.push_back(m["id"]);
  EXPECT_EQ(ids, (std::vector<std::string>{"a", "a-alias", "b", "b-alias", "c", "c-alias"}));
  EXPECT_EQ(request(port_, "GET", "/v1/models/b").status, 200) << "an unloaded model is still served";

  const std::string text = metrics();
  EXPECT_NE(text.find("kairo:model_loaded{model_name=\"b\"} 0"), std::string::npos) << text;
  EXPECT_NE(text.find("kairo:model_loaded{model_name=\"c\"} 1"), std::string::npos);
  EXPECT_NE(text.find("kairo:model_unloads_total{model_name=\"b\"} 1"), std::string::npos);
  EXPECT_NE(text.find("kairo:model_load_seconds_count{model_name=\"a\"} 2"), std::string::npos);
  EXPECT_NE(text.find("kairo:model_memory_bytes{model_name=\"c\"} 100"), std::string::npos);
  // Each model's request series under its own label, one HELP/TYPE per family.
  EXPECT_NE(text.find("kairo:request_success_total{model_name=\"c\",finished_reason=\"length\"} 1"), std::string::npos);
  size_t n_type = 0;
  for (size_t p = text.find("# TYPE kairo:request_success_total "); p != std::string::npos;
       p = text.find("# TYPE kairo:request_success_total ", p + 1)) {
    ++n_type;
  }
  EXPECT_EQ(n_type, 1u);
}

TEST_F(MultiModelTest, AModelServingARequestIsNeverUnloaded) {
  // a and c step only by hand, so a request on them keeps them busy for as long as the test wants.
  shelf_->manual["a"] = true;
  shelf_->manual["c"] = true;
  start(ModelLimits{.max_loaded = 2, .budget_bytes = 0, .wait_s = 0.5}, {{"a", 0}, {"b", 0}, {"c", 0}});
  ASSERT_TRUE(server_->load("a").ok());
  ASSERT_TRUE(server_->load("b").ok());
  server_->mark_ready();
  auto busy = [&](const std::string& id) {
    return shelf_->engine("b")->wait_for([&](const FakeEngine&) {
      FakeEngine* e = shelf_->engine(id);
      return e && e->n_active() == 1;
    });
  };

  // a is the least recently used, but it serves a request: c's load unloads b, the idle one.
  HttpResult a_reply, c_reply;
  std::thread a_client([&] { a_reply = complete("a", 3); });
  ASSERT_TRUE(busy("a"));
  std::thread c_client([&] { c_reply = complete("c", 3); });
  ASSERT_TRUE(shelf_->engine("a")->wait_for([&](const FakeEngine&) {
    FakeEngine* c = shelf_->engine("c");
    return c && c->n_active() == 1;
  }));
  EXPECT_EQ(shelf_->alive("a"), 1) << "busy: kept";
  EXPECT_EQ(shelf_->alive("b"), 0) << "idle: unloaded for c";

  // a and c both busy under --max-loaded-models 2: b cannot come in within the wait, and says why.
  const HttpResult refused = complete("b");
  EXPECT_EQ(refused.status, 503) << refused.body;
  EXPECT_NE(refused.body.find("model_switch_busy"), std::string::npos) << refused.body;
  EXPECT_NE(refused.body.find("--max-loaded-models is 2"), std::string::npos) << refused.body;
  EXPECT_NE(refused.body.find("(a, c)"), std::string::npos) << refused.body;

  shelf_->engine("a")->step(8);
  shelf_->engine("c")->step(8);
  a_client.join();
  c_client.join();
  EXPECT_EQ(a_reply.status, 200) << a_reply.body;
  EXPECT_EQ(c_reply.status, 200) << c_reply.body;
  // Both idle again: b comes in in place of a, the least recently used.
  EXPECT_EQ(complete("b").status, 200);
  EXPECT_EQ(shelf_->alive("a"), 0);
  EXPECT_EQ(shelf_->alive("c"), 1);
}

TEST_F(MultiModelTest, ALoadThatFailsOrCannotFitIsAnErrorNotACrash) {
  shelf_->failure["broken"] = "tensor blk.0.attn_q.weight: truncated file";
  start(ModelLimits{.max_loaded = 0, .budget_bytes = 150, .wait_s = 1}, {{"a", 100}, {"broken", 10}, {"huge", 1000}});
  ASSERT_TRUE(server_->load("a").ok());
  server_->mark_ready();

  const HttpResult failed = complete("broken");
  EXPECT_EQ(failed.status, 500);
  EXPECT_NE(failed.body.find("truncated file"), std::string::npos) << failed.body;
  const HttpResult too_large = complete("huge");
  EXPECT_EQ(too_large.status, 503);
  EXPECT_NE(too_large.body.find("--mem-budget-gb"), std::string::npos) << too_large.body;
  EXPECT_EQ(shelf_->alive("a"), 1) << "a model that cannot fit unloads nothing";
  EXPECT_EQ(complete("a").status, 200);
  // The broken model's file fixed, it loads on the next request.
  {
    std::lock_guard lock(shelf_->mutex);
    shelf_->failure.erase("broken");
  }
  EXPECT_EQ(complete("broken").status, 200);
}

TEST_F(MultiModelTest, TheLastRequestOutlivingTheServerDoesNotDestroyItsEngineOnTheEngineThread) {
  // The engine keeps the finished request's callback (its job, and the job's reference to the server's context) until
  // after the Server is gone. Were the context's last reference dropped there, the registry would unload the model on
  // its own engine thread, which cannot join itself (std::terminate: "Resource deadlock avoided").
  shelf_->callback_release_delay = std::chrono::milliseconds(300);
  start(ModelLimits{.max_loaded = 0, .budget_bytes = 0, .wait_s = 1}, {{"a", 0}, {"b", 0}});
  ASSERT_TRUE(server_->load("a").ok());
  server_->mark_ready();
  EXPECT_EQ(complete("a").status, 200);
  server_->stop();
  server_.reset();
  EXPECT_EQ(shelf_->alive("a"), 0) << "unloaded by the server's stop, on its thread";
}

TEST(MetricFamilies, MergedUnderOneHeadEach) {
  const std::string a = "# HELP x An x.\n# TYPE x counter\nx{m=\"a\"} 1\n# HELP y A y.\n# TYPE y gauge\ny{m=\"a\"} 2\n";
  const std::string b = "# HELP x An x.\n# TYPE x counter\nx{m=\"b\"} 3\n# HELP z A z.\n# TYPE z gauge\n";
  EXPECT_EQ(
      merge_metric_families({a, b}),
      "# HELP x An x.\n# TYPE x counter\nx{m=\"a\"} 1\nx{m=\"b\"} 3\n# HELP y A y.\n# TYPE y gauge\ny{m=\"a\"} 2\n"
      "# HELP z A z.\n# TYPE z gauge\n");
  EXPECT_EQ(merge_metric_families({a}), a);
}

}  // namespace
}  // namespace kairo::server::testing
