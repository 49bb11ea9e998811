// The Responses wire format without HTTP: the exact event sequence (sequence numbers, item and content indices) a
// stream of reasoning, text and a function call makes, the incomplete ending, the complete Response object, errors.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "server/openai/responses_writer.h"
#include "../sse_events.h"

namespace kairo::server {
namespace {

using json = nlohmann::json;
using testing::parse_sse_events;
using testing::sse_event_names;

nlohmann::ordered_json echo() {
  return {{"instructions", nullptr}, {"max_output_tokens", 16}, {"metadata", nlohmann::ordered_json::object()},
          {"parallel_tool_calls", true}, {"temperature", 1.0}, {"text", {{"format", {{"type", "text"}}}}},
          {"tool_choice", "auto"}, {"tools", nlohmann::ordered_json::array()}, {"top_p", 1.0}, {"user", nullptr}};
}

ChoiceDelta delta(std::string text, std::string reasoning = "") {
  ChoiceDelta d;
  d.text = std::move(text);
  d.reasoning = std::move(reasoning);
  return d;
}

TEST(ResponsesWriterTest, ReasoningTextAndACallStreamAsItemsWithSequenceNumbers) {
  ResponsesWriter w("resp_1", 1700000000, "demo", echo());
  std::string sse = w.stream_open(1, 4);
  sse += w.stream_delta(delta("", "hmm"));
  sse += w.stream_delta(delta("Hel"));
  sse += w.stream_delta(delta("lo"));
  ChoiceDelta last = delta("");
  last.tool_calls.push_back({0, ToolCallView{"call_1", "add", R"({"a":1})"}});
  last.finish_reason = "tool_calls";
  sse += w.stream_delta(last);
  sse += w.stream_close(Usage{4, 6, 1});
  const std::vector<testing::SseEvent> ev = parse_sse_events(sse);
  std::vector<std::string> names;
  for (size_t i = 0; i < ev.size(); ++i) {
    names.push_back(ev[i].name);
    EXPECT_EQ(ev[i].data["sequence_number"], i) << ev[i].name;
  }
  EXPECT_EQ(names, (std::vector<std::string>{
                       "response.created", "response.in_progress",
                       "response.output_item.added", "response.content_part.added", "response.reasoning_text.delta",
                       "response.reasoning_text.done", "response.content_part.done", "response.output_item.done",
                       "response.output_item.added", "response.content_part.added", "response.output_text.delta",
                       "response.output_text.delta", "response.output_text.done", "response.content_part.done",
                       "response.output_item.done",
                       "response.output_item.added", "response.function_call_arguments.delta",
                       "response.function_call_arguments.done", "response.output_item.done",
                       "response.completed"}));
  const json created = ev[0].data["response"];
  EXPECT_EQ(created["id"], "resp_1");
  EXPECT_EQ(created["object"], "response");
  EXPECT_EQ(created["status"], "in_progress");
  EXPECT_EQ(created["output"], json::array());
  EXPECT_TRUE(created["usage"].is_null());
  // The message is output item 1, after the reasoning.
  const json added = ev[8].data;
  EXPECT_EQ(added["output_index"], 1);
  const std::string msg_id = added["item"]["id"];
  EXPECT_EQ(msg_id.rfind("msg_", 0), 0u);
  EXPECT_EQ(added["item"], (json{{"id", msg_id}, {"type", "message"}, {"status", "in_progress"},
                                 {"role", "assistant"}, {"content", json::array()}}));
  EXPECT_EQ(ev[10].data, (json{{"type", "response.output_text.delta"},
                               {"sequence_number", 10},
                               {"item_id", msg_id},
                               {"output_index", 1},
                               {"content_index", 0},
                               {"delta", "Hel"},
                               {"logprobs", json::array()}}));
  EXPECT_EQ(ev[12].data["text"], "Hello");
  EXPECT_EQ(ev[16].data["delta"], R"({"a":1})");
  EXPECT_EQ(ev[17].data["arguments"], R"({"a":1})");
  const json done = ev.back().data["response"];
  EXPECT_EQ(done["status"], "completed");
  EXPECT_TRUE(done["incomplete_details"].is_null());
  ASSERT_EQ(done["output"].size(), 3u);
  EXPECT_EQ(done["output"][0]["type"], "reasoning");
  EXPECT_EQ(done["output"][0]["content"], (json{{{"type", "reasoning_text"}, {"text", "hmm"}}}));
  EXPECT_EQ(done["output"][1],
            (json{{"id", msg_id},
                  {"type", "message"},
                  {"status", "completed"},
                  {"role", "assistant"},
                  {"content", {{{"type", "output_text"}, {"text", "Hello"}, {"annotations", json::array()}}}}}));
  EXPECT_EQ(done["output"][2]["type"], "function_call");
  EXPECT_EQ(done["output"][2]["call_id"], "call_1");
  EXPECT_EQ(done["output"][2]["arguments"], R"({"a":1})");
  EXPECT_EQ(done["usage"], (json{{"input_tokens", 4}, {"input_tokens_details", {{"cached_tokens", 1}}},
                                 {"output_tokens", 6}, {"output_tokens_details", {{"reasoning_tokens", 0}}},
                                 {"total_tokens", 10}}));
  EXPECT_EQ(done["store"], false);
  EXPECT_EQ(done["max_output_tokens"], 16);
}

TEST(ResponsesWriterTest, MaxOutputTokensEndsWithResponseIncompleteAndAnEmptyReplyHasAMessage) {
  ResponsesWriter w("resp_2", 1700000000, "demo", echo());
  std::string sse = w.stream_open(1, 4);
  ChoiceDelta end = delta("");
  end.finish_reason = "length";
  sse += w.stream_delta(end);
  sse += w.stream_close(Usage{4, 16, 0});
  const std::vector<testing::SseEvent> ev = parse_sse_events(sse);
  ASSERT_EQ(ev.size(), 8u);
  EXPECT_EQ(ev[2].name, "response.output_item.added");
  EXPECT_EQ(ev[5].name, "response.content_part.done");
  EXPECT_EQ(ev[7].name, "response.incomplete");
  EXPECT_EQ(ev[7].data["response"]["status"], "incomplete");
  EXPECT_EQ(ev[7].data["response"]["incomplete_details"], (json{{"reason", "max_output_tokens"}}));
  EXPECT_EQ(ev[7].data["response"]["output"][0]["content"][0]["text"], "");
}

TEST(ResponsesWriterTest, TheCompleteResponseAndTheErrorEvent) {
  ResponsesWriter w("resp_3", 1700000000, "demo", echo());
  ChoiceResult c;
  c.text = "Hi.";
  c.finish_reason = "stop";
  const json r = json::parse(w.response({c}, Usage{2, 3, 0}));
  EXPECT_EQ(r["id"], "resp_3");
  EXPECT_EQ(r["created_at"], 1700000000);
  EXPECT_EQ(r["status"], "completed");
  EXPECT_EQ(r["model"], "demo");
  ASSERT_EQ(r["output"].size(), 1u);
  EXPECT_EQ(r["output"][0]["content"],
            (json{{{"type", "output_text"}, {"text", "Hi."}, {"annotations", json::array()}}}));
  EXPECT_EQ(r["usage"]["total_tokens"], 5);
  for (const char* key :
       {"instructions", "tools", "tool_choice", "text", "temperature", "top_p", "parallel_tool_calls",
        "previous_response_id", "reasoning", "truncation", "metadata", "error", "incomplete_details"}) {
    EXPECT_TRUE(r.contains(key)) << key;
  }
  const std::vector<testing::SseEvent> ev =
      parse_sse_events(w.stream_error(api_error(500, "device lost", "device_failed")));
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].data, (json{{"type", "error"}, {"sequence_number", 0}, {"code", "device_failed"},
                              {"message", "device lost"}, {"param", nullptr}}));
}

}  // namespace
}  // namespace kairo::server
