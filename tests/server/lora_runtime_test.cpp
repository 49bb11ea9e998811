// LoRA adapters loaded and unloaded while serving, over HTTP with the real engine on the demo model and adapters that
// `kairo lora synth`'s code makes for it: vLLM's load/unload endpoints and their errors in OpenAI's shape, /v1/models
// following them, an adapter unloaded while its request runs (the request finishes under it, the id is then reused),
// the prefix cache kept apart between adapters (each one's output equals its output alone), and a per-request
// `lora` scale equal to the same file loaded at that scale.
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <fstream>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <span>

#include <unistd.h>

#include "convert/lora/synth_adapter.h"
#include "engine/engine.h"
#include "http_client.h"
#include "model/model.h"
#include "server/server.h"
#include "test_paths.h"
#include "tokenizer/tokenizer.h"

namespace kairo::server::testing {
namespace {

using json = nlohmann::json;

// A speculative proposer that proposes nothing, and, while closed, holds the engine thread at the start of the next
// step with a decoding request: the test acts while a request is mid-generation.
class GateProposer final : public engine::Proposer {
 public:
  void propose(std::span<const int32_t>, int, int, std::vector<int32_t>& out) override { out.clear(); }
  void propose_all(std::span<const engine::ProposalSlot> slots) override {
    std::unique_lock<std::mutex> lock(mutex_);
    if (closed_) {
      blocked_ = true;
      cv_.notify_all();
      cv_.wait(lock, [&] { return !closed_; });
      blocked_ = false;
    }
    for (const engine::ProposalSlot& s : slots) s.out->clear();
  }
  void close() {
    std::lock_guard<std::mutex> lock(mutex_);
    closed_ = true;
  }
  void open() {
    std::lock_guard<std::mutex> lock(mutex_);
    closed_ = false;
    cv_.notify_all();
  }
  bool wait_blocked() {
    std::unique_lock<std::mutex> lock(mutex_);
    return cv_.wait_for(lock, std::chrono::seconds(10), [&] { return blocked_; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  bool closed_ = false, blocked_ = false;
};

std::string synth_adapter(uint64_t seed) {
  // The process id in the name: ctest runs each test in its own process, several at once.
  const std::string path = ::testing::TempDir() + "/kairo_lora_runtime_" + std::to_string(::getpid()) + "_" +
                           std::to_string(seed) + ".gguf";
  convert::AdapterSynthOptions o;
  o.rank = 8;
  o.seed = seed;
  o.strength = 0.5f;
  auto r = convert::write_synth_adapter(kairo::testing::demo_model_path(), path, o);
  EXPECT_TRUE(r.ok()) << r.error().message;
  return path;
}

constexpr const char* kPrompt = "Once upon a time, there was a little girl named Lily. She loved to";

class LoraRuntimeTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    adapter_a_ = new std::string(synth_adapter(1));
    adapter_b_ = new std::string(synth_adapter(2));
  }
  static void TearDownTestSuite() {
    std::remove(adapter_a_->c_str());
    std::remove(adapter_b_->c_str());
    delete adapter_a_;
    delete adapter_b_;
  }

  // A fresh model (loads stay in a model), engine and server.
  void start(bool allow_runtime_lora = true, std::vector<std::string> api_keys = {},
             const std::string& api_keys_file = "") {
    TearDown();
    auto m = model::Model::load(kairo::testing::demo_model_path());
    ASSERT_TRUE(m.ok()) << m.error().message;
    model_ = std::move(m).value();
    auto t = tokenizer::Tokenizer::from_gguf(model_->file());
    ASSERT_TRUE(t.ok()) << t.error().message;
    tokenizer_ = std::move(t).value();
    gate_ = std::make_shared<GateProposer>();
    engine::EngineConfig cfg;
    cfg.n_threads = 1;  // the demo model is tiny: one thread, nothing to wait for on a busy machine
    cfg.max_loras = 2;
    cfg.speculative.method = engine::SpeculativeMethod::Custom;
    cfg.speculative.custom = gate_;
    cfg.speculative.adaptive = false;
    auto e = engine::Engine::create(*model_, *tokenizer_, cfg);
    ASSERT_TRUE(e.ok()) << e.error().message;
    engine_ = std::move(e).value();
    ServerConfig c;
    c.port = 0;
    c.n_http_threads = 2;
    c.access_log = false;
    c.allow_runtime_lora = allow_runtime_lora;
    c.api_keys = std::move(api_keys);
    c.api_keys_file = api_keys_file;
    ModelInfo info;
    info.id = "demo";
    server_ = std::make_unique<Server>(c, info);
    ASSERT_TRUE(server_->start().ok());
    server_->attach(*engine_, *tokenizer_);
    port_ = server_->port();
  }
  void TearDown() override {
    if (gate_) gate_->open();
    if (server_) server_->stop();
    server_.reset();
    engine_.reset();
    tokenizer_.reset();
    model_.reset();
  }

  HttpResult post(const std::string& path, const json& body) { return post_json(port_, path, body, headers_); }
  HttpResult load(const std::string& name, const std::string& path, std::optional<double> scale = std::nullopt) {
    json body = {{"lora_name", name}, {"lora_path", path}};
    if (scale) body["scale"] = *scale;
    return post("/v1/load_lora_adapter", body);
  }
  HttpResult unload(const std::string& name) { return post("/v1/unload_lora_adapter", {{"lora_name", name}}); }
  // A greedy completion of kPrompt with these fields: its text and how many prompt tokens the prefix cache served.
  std::pair<std::string, int> complete(const json& fields) {
    json body = {{"prompt", kPrompt}, {"max_tokens", 24}, {"temperature", 0}};
    if (!fields.is_null()) body.update(fields);
    const auto r = post("/v1/completions", body);
    EXPECT_EQ(r.status, 200) << r.body;
    if (r.status != 200) return {"", -1};
    const json j = r.json();
    return {j["choices"][0]["text"], j["usage"]["prompt_tokens_details"]["cached_tokens"]};
  }
  std::vector<std::string> listed_adapters() {
    std::vector<std::string> names;
    const json models = request(port_, "GET", "/v1/models", "", headers_).json();
    for (const auto& m : models["data"]) {
      if (m.contains("parent")) names.push_back(m["id"].get<std::string>() + "=" + m["lora_id"].dump());
    }
    return names;
  }

  static std::string* adapter_a_;
  static std::string* adapter_b_;
  std::unique_ptr<model::Model> model_;
  std::unique_ptr<tokenizer::Tokenizer> tokenizer_;
  std::shared_ptr<GateProposer> gate_;
  std::unique_ptr<engine::Engine> engine_;
  std::unique_ptr<Server> server_;
  std::vector<std::string> headers_;
  int port_ = 0;
};

std::string* LoraRuntimeTest::adapter_a_ = nullptr;
std::string* LoraRuntimeTest::adapter_b_ = nullptr;

TEST_F(LoraRuntimeTest, LoadServeAndUnload) {
  start(true, {"sk-admin"});
  EXPECT_EQ(load("a", *adapter_a_).status, 401);  // behind the API key like every endpoint
  headers_ = {"Authorization: Bearer sk-admin"};
  const auto loaded = load("a", *adapter_a_);
  ASSERT_EQ(loaded.status, 200) << loaded.body;
  EXPECT_EQ(loaded.body, "Success: LoRA adapter 'a' added successfully.");
  EXPECT_EQ(loaded.header("content-type"), "text/plain; charset=utf-8");
  ASSERT_EQ(load("b", *adapter_b_).status, 200);
  EXPECT_EQ(listed_adapters(), (std::vector<std::string>{"a=0", "b=1"}));
  const json one = request(port_, "GET", "/v1/models/b", "", headers_).json();
  EXPECT_EQ(one["parent"], "demo");

  const std::string base = complete({}).first;
  const std::string with_a = complete({{"model", "a"}}).first;
  const std::string with_b = complete({{"model", "b"}}).first;
  EXPECT_NE(with_a, base);
  EXPECT_NE(with_b, with_a);
  EXPECT_EQ(complete({{"lora", {{{"id", 0}, {"scale", 1}}}}}).first, with_a);  // llama-server's way, same adapter

  // Errors, each in OpenAI's shape.
  auto error_of = [](const HttpResult& r) { return r.json()["error"]; };
  const auto full = load("c", *adapter_a_);
  EXPECT_EQ(full.status, 409);
  EXPECT_EQ(error_of(full)["code"], "lora_capacity_exceeded");
  EXPECT_EQ(error_of(full)["message"], "2 LoRA adapters are loaded, the most this server holds at once (--max-loras "
                                       "2); unload one first, or restart with a larger --max-loras");
  const auto again = load("a", *adapter_b_);
  EXPECT_EQ(again.status, 400);
  EXPECT_EQ(error_of(again)["param"], "lora_name");
  EXPECT_EQ(error_of(again)["message"], "The lora adapter 'a' has already been loaded; unload it first "
                                        "(POST /v1/unload_lora_adapter) to load another file under its name");
  const auto base_name = load("demo", *adapter_b_);
  EXPECT_EQ(base_name.status, 400);
  EXPECT_EQ(error_of(base_name)["message"], "'lora_name' \"demo\" is the base model's name; give the adapter a name "
                                            "of its own");
  const auto missing = post("/v1/load_lora_adapter", {{"lora_name", "x"}});
  EXPECT_EQ(missing.status, 400);
  EXPECT_EQ(error_of(missing)["message"], "'lora_path' is required: the path of a llama.cpp GGUF LoRA adapter on the "
                                          "server");

  ASSERT_EQ(unload("a").status, 200);
  EXPECT_EQ(unload("b").body, "Success: LoRA adapter 'b' removed successfully.");
  EXPECT_EQ(listed_adapters(), std::vector<std::string>{});
  EXPECT_EQ(post("/v1/completions", {{"model", "a"}, {"prompt", "hi"}}).status, 404);
  const auto gone = unload("a");
  EXPECT_EQ(gone.status, 404);
  EXPECT_EQ(error_of(gone)["code"], "lora_not_found");
  EXPECT_EQ(error_of(gone)["message"], "The lora adapter 'a' cannot be found");

  // The loader's own checks, as at startup: a model is not an adapter, a missing file is named.
  const auto not_adapter = load("m", kairo::testing::demo_model_path());
  EXPECT_EQ(not_adapter.status, 400);
  EXPECT_EQ(error_of(not_adapter)["param"], "lora_path");
  EXPECT_NE(error_of(not_adapter)["message"].get<std::string>().find("this is not a LoRA adapter file"),
            std::string::npos)
      << not_adapter.body;
  const auto no_file = load("m", "/nonexistent/adapter.gguf");
  EXPECT_EQ(no_file.status, 400);
  EXPECT_NE(error_of(no_file)["message"].get<std::string>().find("/nonexistent/adapter.gguf"), std::string::npos);

  // The freed ids are reused, and the same file under a new name serves the same output.
  ASSERT_EQ(load("b2", *adapter_b_).status, 200);
  EXPECT_EQ(listed_adapters(), (std::vector<std::string>{"b2=0"}));
  EXPECT_EQ(complete({{"model", "b2"}}).first, with_b);
}

// The same prompt under two adapters and the base in one server: each gets its own output, equal to what it gets
// alone on a fresh server, and only a repeat under the same adapter is served from the prefix cache.
TEST_F(LoraRuntimeTest, PrefixCacheIsKeptApartBetweenAdapters) {
  std::map<std::string, std::string> alone;
  for (const char* name : {"a", "b", ""}) {
    start();
    if (*name) ASSERT_EQ(load(name, *name == 'a' ? *adapter_a_ : *adapter_b_).status, 200);
    alone[name] = complete(*name ? json{{"model", name}} : json::object()).first;
  }
  start();
  ASSERT_EQ(load("a", *adapter_a_).status, 200);
  ASSERT_EQ(load("b", *adapter_b_).status, 200);
  const auto a1 = complete({{"model", "a"}});
  const auto b1 = complete({{"model", "b"}});
  const auto base = complete({});
  const auto a2 = complete({{"model", "a"}});
  EXPECT_EQ(a1.first, alone["a"]);
  EXPECT_EQ(b1.first, alone["b"]);
  EXPECT_EQ(base.first, alone[""]);
  EXPECT_EQ(a2.first, alone["a"]);
  EXPECT_EQ(b1.second, 0) << "b must not be served a's KV";
  EXPECT_EQ(base.second, 0) << "the base must not be served an adapter's KV";
  EXPECT_GT(a2.second, 0) << "a's own prefix is reused";
  EXPECT_NE(alone["a"], alone["b"]);
}

// An adapter unloaded while a request of it is mid-generation: it disappears for new requests at once, the running
// one finishes under it with the output it gets alone, and the id is free again only after that.
TEST_F(LoraRuntimeTest, UnloadWhileItsRequestRuns) {
  start();
  ASSERT_EQ(load("a", *adapter_a_).status, 200);
  ASSERT_EQ(load("b", *adapter_b_).status, 200);
  const std::string expected = complete({{"model", "a"}}).first;
  gate_->close();
  auto running = std::async(std::launch::async, [&] {
    return post_json(port_, "/v1/completions",
                     {{"model", "a"}, {"prompt", kPrompt}, {"max_tokens", 24}, {"temperature", 0}});
  });
  ASSERT_TRUE(gate_->wait_blocked()) << "the request never reached its second step";
  ASSERT_EQ(unload("a").status, 200);
  EXPECT_EQ(listed_adapters(), (std::vector<std::string>{"b=1"}));
  EXPECT_EQ(post("/v1/completions", {{"model", "a"}, {"prompt", "hi"}}).status, 404);
  EXPECT_EQ(load("c", *adapter_a_).status, 409) << "a is still resident while its request runs";
  gate_->open();
  const HttpResult r = running.get();
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.json()["choices"][0]["text"], expected);
  const auto reloaded = load("c", *adapter_a_);
  ASSERT_EQ(reloaded.status, 200) << reloaded.body;
  EXPECT_EQ(listed_adapters(), (std::vector<std::string>{"b=1", "c=0"}));
  EXPECT_EQ(complete({{"model", "c"}}).first, expected);
}

// `lora` at a scale other than the loaded one runs exactly the file loaded at that scale.
TEST_F(LoraRuntimeTest, PerRequestScaleEqualsTheFileLoadedAtThatScale) {
  start();
  ASSERT_EQ(load("a", *adapter_a_).status, 200);
  ASSERT_EQ(load("a-half", *adapter_a_, 0.5).status, 200);
  const auto loaded_half = complete({{"model", "a-half"}});
  const auto asked_half = complete({{"lora", {{{"id", 0}, {"scale", 0.5}}}}});
  EXPECT_EQ(asked_half.first, loaded_half.first);
  EXPECT_GT(asked_half.second, 0) << "the same file at the same scale shares its prefix-cache entries";
  EXPECT_NE(asked_half.first, complete({{"model", "a"}}).first);
  EXPECT_EQ(complete({{"model", "a"}, {"lora", {{{"id", 0}, {"scale", 0}}}}}).first, complete({}).first);
}

TEST_F(LoraRuntimeTest, KeysLimitedToSomeModelsMayNotLoad) {
  const std::string path = ::testing::TempDir() + "/kairo_lora_runtime_keys_" + std::to_string(::getpid()) + ".json";
  {
    std::ofstream out(path, std::ios::trunc);
    out << R"({"keys": [{"name": "admin", "key": "sk-admin"},
                        {"name": "app", "key": "sk-app", "models": ["demo"]}]})";
  }
  start(true, {}, path);
  headers_ = {"Authorization: Bearer sk-app"};
  const auto refused = load("a", *adapter_a_);
  EXPECT_EQ(refused.status, 403);
  EXPECT_EQ(refused.json()["error"]["message"], "key 'app' may use only some models, so it may not load or unload "
                                                "LoRA adapters; use a key without a \"models\" list");
  headers_ = {"Authorization: Bearer sk-admin"};
  EXPECT_EQ(load("a", *adapter_a_).status, 200);
  std::remove(path.c_str());
}

}  // namespace
}  // namespace kairo::server::testing
