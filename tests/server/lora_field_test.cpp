// llama-server's per-request `lora` field ([{"id": N, "scale": S}]) over the API: ids are the adapters' places among
// the server's adapters (from 0), unlisted or scale-0 adapters are off, `model` must agree with it, a key's models
// list covers what the request runs, and every refusal is OpenAI's error shape naming the field. Also: the runtime
// load/unload endpoints are off without --allow-runtime-lora.
#include <cstdio>
#include <fstream>

#include <unistd.h>

#include "server_fixture.h"

namespace kairo::server::testing {
namespace {

using json = nlohmann::json;

class LoraFieldTest : public ServerTest {
 protected:
  void SetUp() override { model_info_.adapters = {"sql-lora", "chat-lora"}; }

  // The adapter and scale of the engine request a completion with these fields made.
  std::pair<int, std::optional<float>> submitted(const json& fields) {
    json body = {{"prompt", "Once upon"}, {"max_tokens", 1}};
    body.update(fields);
    const auto r = post("/v1/completions", body);
    EXPECT_EQ(r.status, 200) << r.body;
    if (r.status != 200) return {-1, std::nullopt};
    const engine::Request req = engine_->submitted().back();  // a copy: submitted() returns the list by value
    return {req.adapter, req.adapter_scale};
  }
  // The error a completion with these fields gets (and that nothing reached the engine).
  json refused(const json& fields, int status = 400) {
    json body = {{"prompt", "Once upon"}, {"max_tokens", 1}};
    body.update(fields);
    const size_t n_before = engine_->submitted().size();
    const auto r = post("/v1/completions", body);
    EXPECT_EQ(r.status, status) << r.body;
    EXPECT_EQ(engine_->submitted().size(), n_before);
    return r.json()["error"];
  }
};

using Choice = std::pair<int, std::optional<float>>;

TEST_F(LoraFieldTest, LoraSelectsTheAdapterAndItsScale) {
  start();
  EXPECT_EQ(submitted({{"lora", {{{"id", 1}, {"scale", 0.5}}}}}), Choice(2, 0.5f));
  EXPECT_EQ(submitted({{"lora", {{{"id", 0}, {"scale", 0}}, {{"id", 1}, {"scale", 1}}}}}), Choice(2, 1.0f));
  EXPECT_EQ(submitted({{"lora", json::array()}}), Choice(0, std::nullopt));  // listed nothing: every adapter off
  EXPECT_EQ(submitted({{"lora", {{{"id", 0}, {"scale", 0}}}}}), Choice(0, std::nullopt));
  EXPECT_EQ(submitted({{"model", "demo-alias"}, {"lora", {{{"id", 0}, {"scale", 2}}}}}), Choice(1, 2.0f));
  // `model` naming the adapter `lora` lists: that adapter at the listed scale, 0 being the base.
  EXPECT_EQ(submitted({{"model", "sql-lora"}, {"lora", {{{"id", 0}, {"scale", 0.25}}}}}), Choice(1, 0.25f));
  EXPECT_EQ(submitted({{"model", "sql-lora"}, {"lora", {{{"id", 0}, {"scale", 0}}, {{"id", 1}, {"scale", 0}}}}}),
            Choice(0, std::nullopt));
  EXPECT_EQ(submitted({{"model", "sql-lora"}}), Choice(1, std::nullopt));  // no `lora`: the loaded scale
  EXPECT_EQ(submitted({{"lora", nullptr}}), Choice(0, std::nullopt));

  const auto r = post("/v1/completions", {{"prompt", "hi"}, {"max_tokens", 1}, {"lora", {{{"id", 1}, {"scale", 1}}}}});
  EXPECT_EQ(r.json()["model"], "demo");  // the response names what was asked for
  const auto chat = post("/v1/chat/completions", {{"messages", {{{"role", "user"}, {"content", "hi"}}}},
                                                  {"max_tokens", 1},
                                                  {"lora", {{{"id", 0}, {"scale", 0.75}}}}});
  ASSERT_EQ(chat.status, 200) << chat.body;
  EXPECT_EQ(engine_->submitted().back().adapter, 1);
  EXPECT_EQ(engine_->submitted().back().adapter_scale, 0.75f);
}

TEST_F(LoraFieldTest, BadLoraFieldsAreOpenAiErrorsNamingTheField) {
  start();
  auto check = [&](const json& fields, const std::string& param, const std::string& message) {
    const json e = refused(fields);
    EXPECT_EQ(e["type"], "invalid_request_error") << fields.dump();
    EXPECT_EQ(e["param"], param) << fields.dump();
    EXPECT_EQ(e["message"], message) << fields.dump();
  };
  check({{"lora", {{{"id", 5}, {"scale", 1}}}}}, "lora[0].id",
        "'lora[0].id' is 5, which is no loaded LoRA adapter; the adapters' ids are 0 (\"sql-lora\"), 1 "
        "(\"chat-lora\")");
  check({{"lora", {{{"id", 0}, {"scale", -1}}}}}, "lora[0].scale", "'lora[0].scale' must be a finite number >= 0, got -1");
  check({{"lora", {{{"id", 0}, {"scale", "nan"}}}}}, "lora[0].scale",
        "'lora[0].scale' must be a number (1 = the adapter as loaded, 0 = off), got a string");
  check({{"lora", {{{"id", -1}, {"scale", 1}}}}}, "lora[0].id", "'lora[0].id' must be an integer from 0 to 1048576, got -1");
  check({{"lora", {{{"id", 0}}}}}, "lora[0].scale", "'lora[0].scale' is required");
  check({{"lora", {{{"scale", 1}}}}}, "lora[0].id", "'lora[0].id' is required");
  check({{"lora", {{"id", 0}, {"scale", 1}}}}, "lora",
        "'lora' must be an array of {\"id\": N, \"scale\": S} objects, got an object");
  check({{"lora", {{{"id", 0}, {"scale", 1}}, {{"id", 0}, {"scale", 0}}}}}, "lora[1].id",
        "'lora[1].id' is 0, which lora[0] names already; give each adapter once");
  check({{"lora", {{{"id", 0}, {"scale", 1}}, {{"id", 1}, {"scale", 0.5}}}}}, "lora",
        "'lora' turns on two adapters, 0 (\"sql-lora\") and 1 (\"chat-lora\"); kairo applies one adapter per request: "
        "give the others scale 0 (or leave them out)");
  check({{"model", "sql-lora"}, {"lora", {{{"id", 1}, {"scale", 0}}}}}, "lora",
        "'model' is the LoRA adapter \"sql-lora\", which 'lora' does not list; list it (\"lora\": [{\"id\": 0, "
        "\"scale\": 1}]), or set 'model' to the base model \"demo\"");
  check({{"model", "sql-lora"}, {"lora", {{{"id", 0}, {"scale", 0}}, {{"id", 1}, {"scale", 1}}}}}, "lora",
        "'model' is the LoRA adapter \"sql-lora\" but 'lora' turns on 1 (\"chat-lora\"); name the same adapter in "
        "both, or set 'model' to the base model \"demo\"");
  // JSON has no NaN or infinity (1e999 is refused as JSON); a scale past the float range is refused by name.
  const auto r = request(port_, "POST", "/v1/completions", R"({"prompt": "hi", "lora": [{"id": 0, "scale": 1e999}]})");
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_EQ(r.json()["error"]["message"], "the request body is not valid JSON: number overflow parsing '1e999'");
  const json huge = refused({{"lora", {{{"id", 0}, {"scale", 1e300}}}}});
  EXPECT_EQ(huge["param"], "lora[0].scale");
  // An unknown model is still the 404 it was, lora or not.
  EXPECT_EQ(refused({{"model", "nope"}, {"lora", {{{"id", 0}, {"scale", 1}}}}}, 404)["code"], "model_not_found");
}

TEST_F(LoraFieldTest, WithoutAdaptersEveryIdIsRefused) {
  model_info_.adapters.clear();
  start();
  const json e = refused({{"lora", {{{"id", 0}, {"scale", 1}}}}});
  EXPECT_EQ(e["message"], "'lora[0].id' is 0, which is no loaded LoRA adapter; this server has no LoRA adapters "
                          "loaded");
  EXPECT_EQ(submitted({{"lora", json::array()}}), Choice(0, std::nullopt));
}

// A key's models list applies to what the request runs: the adapter `lora` turns on, or the base.
TEST_F(LoraFieldTest, KeyAllowListCoversTheAdapterLoraSelects) {
  const std::string path = ::testing::TempDir() + "/kairo_lora_field_keys_" + std::to_string(::getpid()) + ".json";
  {
    std::ofstream out(path, std::ios::trunc);
    out << R"({"keys": [{"name": "sql-team", "key": "sk-sql", "models": ["sql-lora"]},
                        {"name": "base-team", "key": "sk-base", "models": ["demo"]}]})";
  }
  ServerConfig c = test_config();
  c.api_keys_file = path;
  start(c);
  auto ask = [&](const std::string& key, const json& fields) {
    json body = {{"prompt", "hi"}, {"max_tokens", 1}};
    body.update(fields);
    return post("/v1/completions", body, {"Authorization: Bearer " + key});
  };
  EXPECT_EQ(ask("sk-sql", {{"lora", {{{"id", 0}, {"scale", 1}}}}}).status, 200);
  const auto other = ask("sk-sql", {{"lora", {{{"id", 1}, {"scale", 1}}}}});
  EXPECT_EQ(other.status, 403);
  EXPECT_EQ(other.json()["error"]["code"], "model_not_allowed");
  EXPECT_EQ(ask("sk-sql", {{"model", "sql-lora"}, {"lora", {{{"id", 0}, {"scale", 0}}}}}).status, 403)
      << "scale 0 runs the base model";
  EXPECT_EQ(ask("sk-base", {{"lora", {{{"id", 0}, {"scale", 1}}}}}).status, 403);
  EXPECT_EQ(ask("sk-base", {{"lora", {{{"id", 0}, {"scale", 0}}}}}).status, 200);
  std::remove(path.c_str());
}

TEST_F(LoraFieldTest, RuntimeLoadingIsOffWithoutTheFlag) {
  ServerConfig c = test_config();
  c.api_keys = {"sk-test"};
  start(c);
  const std::vector<std::string> key = {"Authorization: Bearer sk-test"};
  EXPECT_EQ(post("/v1/load_lora_adapter", {{"lora_name", "x"}, {"lora_path", "/tmp/x.gguf"}}).status, 401);
  for (const char* path : {"/v1/load_lora_adapter", "/v1/unload_lora_adapter"}) {
    const auto r = post(path, {{"lora_name", "x"}, {"lora_path", "/tmp/x.gguf"}}, key);
    EXPECT_EQ(r.status, 404);
    EXPECT_EQ(r.json()["error"]["message"], std::string("POST ") + path +
                                                " is off: start kairo serve with --allow-runtime-lora to load and "
                                                "unload LoRA adapters while it serves");
    EXPECT_EQ(r.json()["error"]["code"], "not_found");
  }
  EXPECT_EQ(request(port_, "GET", "/v1/load_lora_adapter", "", key).status, 405);
}

}  // namespace
}  // namespace kairo::server::testing
