// POST /v1/responses over HTTP with the fake engine: the Response object, its stream of named events with sequence
// numbers that concatenates to the same text, max_output_tokens ending it as incomplete, store accepted and never
// honoured, stateful fields refused with OpenAI-shaped errors.
#include "server_fixture.h"
#include "sse_events.h"

namespace kairo::server::testing {
namespace {

using json = nlohmann::json;

class ResponsesTest : public ServerTest {};

TEST_F(ResponsesTest, AResponseWithItsOutputTextAndUsage) {
  FakeEngineConfig engine;
  engine.eos_after = 4;
  start(test_config(), engine);
  const auto r = post("/v1/responses", {{"model", "demo"}, {"input", "Hello"}, {"instructions", "Be brief."},
                                        {"max_output_tokens", 10}, {"store", true}});
  ASSERT_EQ(r.status, 200) << r.body;
  const json resp = r.json();
  const std::vector<int32_t> prompt = engine_->submitted().at(0).prompt_tokens;
  EXPECT_EQ(resp["id"].get<std::string>().rfind("resp_", 0), 0u);
  EXPECT_EQ(resp["object"], "response");
  EXPECT_EQ(resp["status"], "completed");
  EXPECT_EQ(resp["model"], "demo");
  EXPECT_EQ(resp["instructions"], "Be brief.");
  EXPECT_EQ(resp["store"], false);
  ASSERT_EQ(resp["output"].size(), 1u);
  const json item = resp["output"][0];
  EXPECT_EQ(item["type"], "message");
  EXPECT_EQ(item["role"], "assistant");
  EXPECT_EQ(item["status"], "completed");
  EXPECT_EQ(item["content"],
            (json{{{"type", "output_text"}, {"text", fake_text(prompt, 4)}, {"annotations", json::array()}}}));
  EXPECT_EQ(resp["usage"]["input_tokens"], prompt.size());
  EXPECT_EQ(resp["usage"]["output_tokens"], 5);  // four text tokens and the end of the turn
  EXPECT_EQ(resp["usage"]["total_tokens"], prompt.size() + 5);
  EXPECT_EQ(engine_->submitted().at(0).stop.max_tokens, 10);
}

TEST_F(ResponsesTest, TheStreamNumbersItsEventsAndSaysTheSame) {
  start();
  const json body = {
      {"input", json::array({{{"role", "user"}, {"content", {{{"type", "input_text"}, {"text", "Hi"}}}}}})},
      {"max_output_tokens", 6}};
  const json full = post("/v1/responses", body).json();
  json streamed_body = body;
  streamed_body["stream"] = true;
  const auto s = post("/v1/responses", streamed_body);
  ASSERT_EQ(s.status, 200) << s.body;
  const std::vector<SseEvent> ev = parse_sse_events(s.body);
  const std::vector<std::string> names = sse_event_names(ev);
  ASSERT_GE(names.size(), 9u);
  EXPECT_EQ(std::vector<std::string>(names.begin(), names.begin() + 4),
            (std::vector<std::string>{"response.created", "response.in_progress", "response.output_item.added",
                                      "response.content_part.added"}));
  EXPECT_EQ(std::vector<std::string>(names.end() - 4, names.end()),
            (std::vector<std::string>{"response.output_text.done", "response.content_part.done",
                                      "response.output_item.done", "response.incomplete"}));
  std::string text;
  for (size_t i = 0; i < ev.size(); ++i) {
    EXPECT_EQ(ev[i].data["sequence_number"], i);
    if (ev[i].name == "response.output_text.delta") text += ev[i].data["delta"].get<std::string>();
  }
  EXPECT_EQ(full["status"], "incomplete");
  EXPECT_EQ(full["incomplete_details"], (json{{"reason", "max_output_tokens"}}));
  EXPECT_EQ(text, full["output"][0]["content"][0]["text"]);
  const json last = ev.back().data["response"];
  EXPECT_EQ(last["status"], "incomplete");
  EXPECT_EQ(last["output"][0]["content"][0]["text"], text);
  EXPECT_EQ(last["usage"], full["usage"]);
}

TEST_F(ResponsesTest, RefusalsAreOpenAIErrorsNamingTheResponsesFields) {
  start();
  auto r = post("/v1/responses", {{"input", "Hi"}, {"previous_response_id", "resp_abc"}});
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.json()["error"]["type"], "invalid_request_error");
  EXPECT_EQ(r.json()["error"]["param"], "previous_response_id");
  r = post("/v1/responses", {{"input", "Hi"}, {"model", "gpt-5"}});
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(r.json()["error"]["code"], "model_not_found");
  r = post("/v1/responses", {{"input", "Hi"}, {"max_output_tokens", 1000}});
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.json()["error"]["param"], "max_output_tokens");
  EXPECT_EQ(r.json()["error"]["code"], "context_length_exceeded");
  EXPECT_NE(r.json()["error"]["message"].get<std::string>().find("or the completion (max_output_tokens)."),
            std::string::npos);
  r = post("/v1/responses", {{"instructions", "x"}});
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.json()["error"]["param"], "input");
  EXPECT_TRUE(engine_->submitted().empty());
}

}  // namespace
}  // namespace kairo::server::testing
