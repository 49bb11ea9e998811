// LoRA adapters over the API (vLLM's way): a request's `model` selects the adapter, /v1/models lists each adapter
// with `parent` = the base model, an unknown name is OpenAI's 404, and a key's `models` allow-list covers adapters.
#include <cstdio>
#include <fstream>

#include "server_fixture.h"

namespace kairo::server::testing {
namespace {

using json = nlohmann::json;

class LoraModelsTest : public ServerTest {
 protected:
  void SetUp() override { model_info_.adapters = {"sql-lora", "chat-lora"}; }
};

TEST_F(LoraModelsTest, ModelSelectsTheAdapter) {
  start();
  const json body = {{"prompt", "Once upon"}, {"max_tokens", 2}};
  for (auto [model, adapter] : {std::pair{"demo", 0}, std::pair{"demo-alias", 0}, std::pair{"sql-lora", 1},
                                std::pair{"chat-lora", 2}}) {
    json b = body;
    b["model"] = model;
    const auto r = post("/v1/completions", b);
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(r.json()["model"], model);
    EXPECT_EQ(engine_->submitted().back().adapter, adapter) << model;
  }
  const auto chat = post("/v1/chat/completions", {{"model", "chat-lora"},
                                                  {"messages", {{{"role", "user"}, {"content", "hi"}}}},
                                                  {"max_tokens", 1}});
  ASSERT_EQ(chat.status, 200) << chat.body;
  EXPECT_EQ(engine_->submitted().back().adapter, 2);
  const auto none = post("/v1/completions", body);  // no model: the base
  ASSERT_EQ(none.status, 200);
  EXPECT_EQ(engine_->submitted().back().adapter, 0);
}

TEST_F(LoraModelsTest, ModelsListsAdaptersWithTheirParent) {
  start();
  const auto r = get("/v1/models");
  ASSERT_EQ(r.status, 200);
  const json data = r.json()["data"];
  ASSERT_EQ(data.size(), 4u);
  EXPECT_EQ(data[0]["id"], "demo");
  EXPECT_FALSE(data[0].contains("parent"));
  EXPECT_EQ(data[2], (json{{"id", "sql-lora"},
                           {"object", "model"},
                           {"created", 1700000000},
                           {"owned_by", "kairo"},
                           {"root", "sql-lora"},
                           {"parent", "demo"},
                           {"max_model_len", 256},
                           {"lora_id", 0}}));
  EXPECT_EQ(data[3]["id"], "chat-lora");
  EXPECT_EQ(data[3]["parent"], "demo");
  EXPECT_EQ(data[3]["lora_id"], 1);
  const auto one = get("/v1/models/chat-lora");
  ASSERT_EQ(one.status, 200);
  EXPECT_EQ(one.json()["parent"], "demo");
}

TEST_F(LoraModelsTest, UnknownAdapterIsOpenAis404) {
  start();
  const auto r = post("/v1/completions", {{"model", "no-such-lora"}, {"prompt", "hi"}, {"max_tokens", 1}});
  ASSERT_EQ(r.status, 404);
  const json e = r.json()["error"];
  EXPECT_EQ(e["code"], "model_not_found");
  EXPECT_EQ(e["type"], "invalid_request_error");
  EXPECT_EQ(e["param"], "model");
  EXPECT_EQ(e["message"], "The model \"no-such-lora\" does not exist; this server serves \"demo\"");
  EXPECT_EQ(get("/v1/models/no-such-lora").status, 404);
  EXPECT_TRUE(engine_->submitted().empty());
}

// A key limited to one adapter uses it, is refused the base and the other adapter, and lists only its adapter.
TEST_F(LoraModelsTest, KeyAllowListCoversAdapterNames) {
  const std::string path = ::testing::TempDir() + "/kairo_lora_keys.json";
  {
    std::ofstream out(path, std::ios::trunc);
    out << R"({"keys": [{"name": "sql-team", "key": "sk-sql", "models": ["sql-lora"]}]})";
  }
  ServerConfig c = test_config();
  c.api_keys_file = path;
  start(c);
  const std::vector<std::string> key = {"Authorization: Bearer sk-sql"};
  auto ask = [&](const std::string& model) {
    return post("/v1/completions", {{"model", model}, {"prompt", "hi"}, {"max_tokens", 1}}, key).status;
  };
  EXPECT_EQ(ask("sql-lora"), 200);
  EXPECT_EQ(ask("chat-lora"), 403);
  EXPECT_EQ(ask("demo"), 403);
  const json data = get("/v1/models", key).json()["data"];
  ASSERT_EQ(data.size(), 1u);
  EXPECT_EQ(data[0]["id"], "sql-lora");
  std::remove(path.c_str());
}

}  // namespace
}  // namespace kairo::server::testing
