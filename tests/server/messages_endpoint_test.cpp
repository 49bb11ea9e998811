// POST /v1/messages and /v1/messages/count_tokens over HTTP with the fake engine: the Message object and its usage,
// the exact stream of named events concatenating to the same text, stop reasons, thinking blocks from a thinking
// template, Anthropic-shaped errors (before and during a stream), and keys sent as x-api-key.
#include "server_fixture.h"
#include "sse_events.h"

namespace kairo::server::testing {
namespace {

using json = nlohmann::json;

const std::vector<std::string> kAnthropicHeaders = {"anthropic-version: 2023-06-01"};

json hello(int max_tokens, bool stream = false) {
  return {{"model", "demo"},
          {"max_tokens", max_tokens},
          {"messages", {{{"role", "user"}, {"content", "Hello"}}}},
          {"stream", stream}};
}

class MessagesTest : public ServerTest {};

TEST_F(MessagesTest, AMessageWithItsTextStopReasonAndUsage) {
  start();
  const auto r = post("/v1/messages", hello(5), kAnthropicHeaders);
  ASSERT_EQ(r.status, 200) << r.body;
  const json m = r.json();
  const std::vector<int32_t> prompt = engine_->submitted().at(0).prompt_tokens;
  EXPECT_EQ(m["id"].get<std::string>().rfind("msg_", 0), 0u) << m;
  EXPECT_EQ(m["type"], "message");
  EXPECT_EQ(m["role"], "assistant");
  EXPECT_EQ(m["model"], "demo");
  EXPECT_EQ(m["content"], (json{{{"type", "text"}, {"text", fake_text(prompt, 5)}}}));
  EXPECT_EQ(m["stop_reason"], "max_tokens");
  EXPECT_TRUE(m["stop_sequence"].is_null());
  EXPECT_EQ(m["usage"], (json{{"input_tokens", prompt.size()}, {"output_tokens", 5}}));
  EXPECT_EQ(engine_->submitted().at(0).stop.max_tokens, 5);
}

TEST_F(MessagesTest, TheStreamIsAnthropicsEventSequenceAndSaysTheSame) {
  start();
  const json full = post("/v1/messages", hello(6)).json();
  const auto s = post("/v1/messages", hello(6, true), kAnthropicHeaders);
  ASSERT_EQ(s.status, 200) << s.body;
  EXPECT_EQ(s.header("content-type"), "text/event-stream");
  const std::vector<SseEvent> ev = parse_sse_events(s.body);
  ASSERT_GE(ev.size(), 7u);
  const std::vector<std::string> names = sse_event_names(ev);
  EXPECT_EQ(std::vector<std::string>(names.begin(), names.begin() + 3),
            (std::vector<std::string>{"message_start", "content_block_start", "ping"}));
  EXPECT_EQ(std::vector<std::string>(names.end() - 3, names.end()),
            (std::vector<std::string>{"content_block_stop", "message_delta", "message_stop"}));
  std::string text;
  for (size_t i = 3; i + 3 < ev.size(); ++i) {
    ASSERT_EQ(ev[i].name, "content_block_delta");
    EXPECT_EQ(ev[i].data["index"], 0);
    text += ev[i].data["delta"]["text"].get<std::string>();
  }
  EXPECT_EQ(text, full["content"][0]["text"]);
  const json start_message = ev[0].data["message"];
  EXPECT_EQ(start_message["usage"]["input_tokens"], full["usage"]["input_tokens"]);
  EXPECT_EQ(start_message["content"], json::array());
  EXPECT_EQ(ev[ev.size() - 2].data["delta"], (json{{"stop_reason", "max_tokens"}, {"stop_sequence", nullptr}}));
  EXPECT_EQ(ev[ev.size() - 2].data["usage"]["output_tokens"], 6);
}

TEST_F(MessagesTest, AStopSequenceAndTheEndOfTurnAreNamed) {
  FakeEngineConfig engine;
  engine.eos_after = 3;
  start(test_config(), engine);
  json m = post("/v1/messages", hello(10)).json();
  EXPECT_EQ(m["stop_reason"], "end_turn") << m;
  const std::string text = fake_text(engine_->submitted().at(0).prompt_tokens, 3);
  ASSERT_GE(text.size(), 3u);
  const std::string stop = text.substr(1, 2);
  json body = hello(10);
  body["stop_sequences"] = {stop};
  m = post("/v1/messages", body).json();
  EXPECT_EQ(m["stop_reason"], "stop_sequence") << m;
  EXPECT_EQ(m["stop_sequence"], stop);
  EXPECT_EQ(m["content"][0]["text"], text.substr(0, text.find(stop)));
}

TEST_F(MessagesTest, AThinkingTemplatesReasoningComesAsAThinkingBlock) {
  ServerConfig config = test_config();
  config.reasoning_format = ServerConfig::ReasoningFormat::Auto;
  engine_ = std::make_unique<FakeEngine>(demo_tokenizer(), FakeEngineConfig{});
  server_ = std::make_unique<Server>(config, model_info_);
  ASSERT_TRUE(server_->start().ok());
  // The template opens the thinking block, which the fake reply never closes: all of it is thinking.
  server_->attach(*engine_, demo_tokenizer(), [](const ChatTemplateInput& in) -> Result<std::string> {
    std::string s;
    for (const auto& m : in.messages) s += m["role"].get<std::string>() + ": " + m["content"].get<std::string>() + "\n";
    return s + "assistant: <think>\n";
  }, ChatTemplateTraits{true});
  port_ = server_->port();
  json body = hello(4);
  body["thinking"] = {{"type", "enabled"}, {"budget_tokens", 1024}};
  const json m = post("/v1/messages", body).json();
  const std::string thought = fake_text(engine_->submitted().at(0).prompt_tokens, 4);
  EXPECT_EQ(m["content"], (json{{{"type", "thinking"}, {"thinking", thought}, {"signature", ""}},
                                {{"type", "text"}, {"text", ""}}}))
      << m;
  body["stream"] = true;
  const std::vector<SseEvent> ev = parse_sse_events(post("/v1/messages", body).body);
  ASSERT_GE(ev.size(), 4u);
  EXPECT_EQ(ev[1].data["content_block"], (json{{"type", "thinking"}, {"thinking", ""}}));
  std::string streamed;
  for (const SseEvent& e : ev) {
    if (e.name == "content_block_delta" && e.data["delta"]["type"] == "thinking_delta") {
      streamed += e.data["delta"]["thinking"].get<std::string>();
    }
  }
  EXPECT_EQ(streamed, thought);
}

TEST_F(MessagesTest, ErrorsHaveAnthropicsShape) {
  start();
  auto r = post("/v1/messages", {{"messages", {{{"role", "user"}, {"content", "x"}}}}});
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.json(), (json{{"type", "error"},
                            {"error",
                             {{"type", "invalid_request_error"},
                              {"message", "'max_tokens' is required: the most tokens the reply may have"}}}}));
  json body = hello(4);
  body["model"] = "claude-sonnet-4-5";
  r = post("/v1/messages", body);
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(r.json()["error"]["type"], "not_found_error");
  EXPECT_EQ(r.json()["error"]["message"],
            "The model \"claude-sonnet-4-5\" does not exist; this server serves \"demo\"");
  r = request(port_, "POST", "/v1/messages", "{\"max_tokens\": ");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.json()["type"], "error");
  r = get("/v1/messages");
  EXPECT_EQ(r.status, 405);
  EXPECT_EQ(r.json()["error"]["type"], "invalid_request_error");
  EXPECT_TRUE(engine_->submitted().empty());
}

TEST_F(MessagesTest, KeysAreAcceptedAsXApiKeyOrBearer) {
  ServerConfig config = test_config();
  config.api_keys = {"sk-ant"};
  start(config);
  auto r = post("/v1/messages", hello(2));
  EXPECT_EQ(r.status, 401);
  EXPECT_EQ(r.json(), (json{{"type", "error"},
                            {"error",
                             {{"type", "authentication_error"},
                              {"message", "missing or invalid API key: send the header 'x-api-key: <key>' or "
                                          "'Authorization: Bearer <key>'"}}}}));
  EXPECT_EQ(post("/v1/messages", hello(2), {"x-api-key: sk-wrong"}).status, 401);
  EXPECT_EQ(post("/v1/messages", hello(2), {"x-api-key: sk-ant", "anthropic-version: 2023-06-01"}).status, 200);
  EXPECT_EQ(post("/v1/messages", hello(2), {"Authorization: Bearer sk-ant"}).status, 200);
  // Authorization decides when both are sent.
  EXPECT_EQ(post("/v1/messages", hello(2), {"Authorization: Bearer sk-wrong", "x-api-key: sk-ant"}).status, 401);
  // The OpenAI routes take x-api-key too, and keep their own error shape.
  EXPECT_EQ(post("/v1/chat/completions", hello(2), {"x-api-key: sk-ant"}).status, 200);
  EXPECT_EQ(post("/v1/chat/completions", hello(2)).json()["error"]["code"], "invalid_api_key");
}

TEST_F(MessagesTest, CountTokensCountsThePromptTheMessageWouldHave) {
  start();
  json body = hello(3);
  body["system"] = "Be brief.";
  ASSERT_EQ(post("/v1/messages", body).status, 200);
  body.erase("max_tokens");
  const auto r = post("/v1/messages/count_tokens", body);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.json(), (json{{"input_tokens", engine_->submitted().at(0).prompt_tokens.size()}}));
  EXPECT_EQ(engine_->submitted().size(), 1u);
  EXPECT_EQ(post("/v1/messages/count_tokens", json{{"messages", json::array()}}).json()["error"]["type"],
            "invalid_request_error");
}

TEST_F(MessagesTest, AFailureMidStreamIsAnErrorEvent) {
  FakeEngineConfig engine;
  engine.manual = true;
  start(test_config(), engine);
  Connection c(port_);
  ASSERT_TRUE(c.send(format_request("POST", "/v1/messages", hello(50, true).dump())));
  ASSERT_TRUE(engine_->wait_for([](const FakeEngine& e) { return e.n_active() == 1; }));
  ASSERT_TRUE(c.read_head().has_value());
  engine_->step(2);
  engine_->fail_device("the device failed");
  std::string events;
  for (auto chunk = c.read_chunk(); chunk && !chunk->empty(); chunk = c.read_chunk()) events += *chunk;
  const std::vector<SseEvent> ev = parse_sse_events(events);
  ASSERT_FALSE(ev.empty());
  EXPECT_EQ(ev.front().name, "message_start");
  EXPECT_EQ(ev.back().name, "error");
  EXPECT_EQ(ev.back().data,
            (json{{"type", "error"}, {"error", {{"type", "api_error"}, {"message", "the device failed"}}}}));
}

}  // namespace
}  // namespace kairo::server::testing
