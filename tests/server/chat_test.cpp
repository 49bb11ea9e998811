// POST /v1/chat/completions, /tokenize, /detokenize, /v1/models: prompts come from the chat template, tools reach
// it, and the response has the chat.completion shape.
#include "server_fixture.h"

namespace kairo::server::testing {
namespace {

using json = nlohmann::json;

std::vector<int32_t> chatml_tokens(const std::vector<std::pair<std::string, std::string>>& messages) {
  std::string text;
  for (const auto& [role, content] : messages) text += "<|im_start|>" + role + "\n" + content + "<|im_end|>\n";
  text += "<|im_start|>assistant\n";
  const auto& tok = demo_tokenizer();
  return tok.encode(text, tok.add_bos_by_default(), true);
}

class ChatTest : public ServerTest {
 protected:
  void SetUp() override { start(); }
};

TEST_F(ChatTest, ResponseHasTheChatCompletionShape) {
  const auto r = post("/v1/chat/completions", {{"model", "demo"},
                                               {"messages",
                                                {{{"role", "system"}, {"content", "Be brief."}},
                                                 {{"role", "user"}, {"content", "Hello"}}}},
                                               {"max_tokens", 4}});
  ASSERT_EQ(r.status, 200) << r.body;
  const json j = r.json();
  EXPECT_EQ(j["object"], "chat.completion");
  EXPECT_EQ(j["id"].get<std::string>().rfind("chatcmpl-", 0), 0u);
  const auto prompt = chatml_tokens({{"system", "Be brief."}, {"user", "Hello"}});
  ASSERT_EQ(engine_->submitted().size(), 1u);
  EXPECT_EQ(engine_->submitted()[0].prompt_tokens, prompt);
  const json& choice = j["choices"][0];
  EXPECT_EQ(choice["message"], (json{{"role", "assistant"}, {"content", fake_text(prompt, 4)}}));
  EXPECT_EQ(choice["finish_reason"], "length");
  EXPECT_TRUE(choice["logprobs"].is_null());
  EXPECT_EQ(j["usage"]["prompt_tokens"], prompt.size());
  EXPECT_EQ(j["usage"]["completion_tokens"], 4);
}

TEST_F(ChatTest, TextContentPartsAreJoined) {
  const json parts = {{{"type", "text"}, {"text", "Hello"}}, {{"type", "text"}, {"text", "there"}}};
  const auto r = post("/v1/chat/completions", {{"messages", {{{"role", "user"}, {"content", parts}}}}, {"max_tokens", 1}});
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(engine_->submitted()[0].prompt_tokens, chatml_tokens({{"user", "Hello\nthere"}}));
}

TEST_F(ChatTest, MaxCompletionTokensWinsAndDefaultUsesTheRestOfTheContext) {
  const json msgs = {{{"role", "user"}, {"content", "Hi"}}};
  ASSERT_EQ(post("/v1/chat/completions", {{"messages", msgs}, {"max_tokens", 9}, {"max_completion_tokens", 3}}).status,
            200);
  EXPECT_EQ(engine_->submitted()[0].stop.max_tokens, 3);
  ASSERT_EQ(post("/v1/chat/completions", {{"messages", msgs}, {"stream", false}}).status, 200);
  const auto second = engine_->submitted()[1];
  EXPECT_EQ(second.stop.max_tokens, 256 - static_cast<int>(second.prompt_tokens.size()));
}

TEST_F(ChatTest, EosFinishesWithStop) {
  TearDown();
  FakeEngineConfig ec;
  ec.eos_after = 2;
  start(test_config(), ec);
  const auto r = post("/v1/chat/completions", {{"messages", {{{"role", "user"}, {"content", "Hi"}}}}, {"max_tokens", 10}});
  ASSERT_EQ(r.status, 200) << r.body;
  const json j = r.json();
  EXPECT_EQ(j["choices"][0]["finish_reason"], "stop");
  EXPECT_EQ(j["choices"][0]["message"]["content"], fake_text(engine_->submitted()[0].prompt_tokens, 2));
  EXPECT_EQ(j["usage"]["completion_tokens"], 3);  // the EOS token counts as generated
}

TEST_F(ChatTest, ChatLogprobsShape) {
  const auto r = post("/v1/chat/completions", {{"messages", {{{"role", "user"}, {"content", "Hi"}}}},
                                               {"max_tokens", 2},
                                               {"logprobs", true}});
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(engine_->submitted()[0].sampling.n_logprobs, 0);
  const json lp = r.json()["choices"][0]["logprobs"];
  ASSERT_EQ(lp["content"].size(), 2u);
  EXPECT_TRUE(lp["refusal"].is_null());
  for (const auto& e : lp["content"]) {
    EXPECT_TRUE(e["token"].is_string());
    EXPECT_TRUE(e["bytes"].is_array());
    EXPECT_EQ(e["top_logprobs"], json::array());
  }
}

TEST_F(ChatTest, ToolsAndToolCallsReachTheTemplate) {
  TearDown();
  auto seen = std::make_shared<nlohmann::ordered_json>();
  ChatTemplate capture = [seen](const ChatTemplateInput& in) -> Result<std::string> {
    (*seen)["messages"] = in.messages;
    (*seen)["tools"] = in.tools;
    (*seen)["add_generation_prompt"] = in.add_generation_prompt;
    return std::string("rendered");
  };
  start(test_config(), {}, capture);
  const json tools = {{{"type", "function"},
                       {"function", {{"name", "get_weather"}, {"parameters", {{"type", "object"}}}}}}};
  const json messages = {
      {{"role", "user"}, {"content", "Weather?"}},
      {{"role", "assistant"},
       {"content", nullptr},
       {"tool_calls",
        {{{"id", "call_1"}, {"type", "function"},
          {"function", {{"name", "get_weather"}, {"arguments", "{\"city\":\"Paris\"}"}}}}}}},
      {{"role", "tool"}, {"tool_call_id", "call_1"}, {"content", "sunny"}}};
  const auto r = post("/v1/chat/completions",
                      {{"messages", messages}, {"tools", tools}, {"tool_choice", "auto"}, {"max_tokens", 1}});
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ((*seen)["tools"].dump(), tools.dump());
  EXPECT_EQ((*seen)["add_generation_prompt"], true);
  const json m = json::parse((*seen)["messages"].dump());
  ASSERT_EQ(m.size(), 3u);
  EXPECT_TRUE(m[1]["content"].is_null());  // as Hugging Face hands it over: some templates test `is none`
  // Arguments arrive as an object, which is what templates index into.
  EXPECT_EQ(m[1]["tool_calls"][0]["function"]["arguments"], (json{{"city", "Paris"}}));
  EXPECT_EQ(m[2]["tool_call_id"], "call_1");
  const auto& tok = demo_tokenizer();
  EXPECT_EQ(engine_->submitted()[0].prompt_tokens, tok.encode("rendered", tok.add_bos_by_default(), true));
}

TEST_F(ChatTest, TemplateErrorIsA400WithItsMessage) {
  TearDown();
  start(test_config(), {}, [](const ChatTemplateInput&) -> Result<std::string> {
    return Error{"Conversation roles must alternate user/assistant/user/assistant/..."};
  });
  const auto r = post("/v1/chat/completions", {{"messages", {{{"role", "user"}, {"content", "Hi"}}}}});
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.json()["error"]["message"],
            "the model's chat template rejected the conversation: Conversation roles must alternate "
            "user/assistant/user/assistant/...");
  EXPECT_EQ(r.json()["error"]["param"], "messages");
  EXPECT_TRUE(engine_->submitted().empty());
}

TEST_F(ChatTest, TokenizeTextAndMessagesAndDetokenize) {
  const auto& tok = demo_tokenizer();
  auto r = post("/tokenize", {{"prompt", "Hello world"}});
  ASSERT_EQ(r.status, 200) << r.body;
  const auto ids = tok.encode("Hello world", tok.add_bos_by_default(), true);
  EXPECT_EQ(r.json(), (json{{"tokens", ids}, {"count", ids.size()}, {"max_model_len", 256}}));

  r = post("/tokenize", {{"prompt", "Hello world"}, {"add_special_tokens", false}});
  EXPECT_EQ(r.json()["tokens"], tok.encode("Hello world", false, true));

  r = post("/tokenize", {{"messages", {{{"role", "user"}, {"content", "Hi"}}}}});
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.json()["tokens"], chatml_tokens({{"user", "Hi"}}));

  r = post("/detokenize", {{"tokens", ids}});
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.json(), (json{{"prompt", tok.detokenize(ids)}}));
  EXPECT_TRUE(engine_->submitted().empty());
}

TEST_F(ChatTest, ModelsListsTheModelAndItsAliases) {
  auto r = get("/v1/models");
  ASSERT_EQ(r.status, 200);
  const json j = r.json();
  EXPECT_EQ(j["object"], "list");
  ASSERT_EQ(j["data"].size(), 2u);
  EXPECT_EQ(j["data"][0], (json{{"id", "demo"},
                                {"object", "model"},
                                {"created", 1700000000},
                                {"owned_by", "kairo"},
                                {"root", "demo"},
                                {"max_model_len", 256}}));
  EXPECT_EQ(j["data"][1]["id"], "demo-alias");
  r = get("/v1/models/demo");
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.json()["id"], "demo");
  r = get("/v1/models/other");
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(r.json()["error"]["code"], "model_not_found");
}

TEST_F(ChatTest, HealthIsOk) {
  const auto r = get("/health");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.json(), (json{{"status", "ok"}}));
}

}  // namespace
}  // namespace kairo::server::testing
