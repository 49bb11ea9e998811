// The Messages wire format without HTTP: the exact event sequence a stream of thinking, text and tool calls makes,
// the complete Message object, stop reasons, and the error event.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "server/anthropic/anthropic_error.h"
#include "server/anthropic/messages_writer.h"
#include "../sse_events.h"

namespace kairo::server {
namespace {

using json = nlohmann::json;
using testing::parse_sse_events;
using testing::sse_event_names;

ChoiceDelta delta(std::string text, std::string reasoning = "") {
  ChoiceDelta d;
  d.text = std::move(text);
  d.reasoning = std::move(reasoning);
  return d;
}

TEST(MessagesWriterTest, ThinkingTextAndAToolCallStreamAsBlocksInOrder) {
  MessagesWriter w("msg_1", "demo");
  std::string sse = w.stream_open(1, 7);
  sse += w.stream_delta(delta("", "Let me"));
  sse += w.stream_delta(delta("", " think."));
  sse += w.stream_delta(delta("Checking"));
  sse += w.stream_delta(delta(""));  // a step whose text was held back: nothing to say
  ChoiceDelta last = delta(" now.");
  last.tool_calls.push_back({0, ToolCallView{"call_1", "get_weather", R"({"city":"Oslo"})"}});
  last.finish_reason = "tool_calls";
  sse += w.stream_delta(last);
  sse += w.stream_close(Usage{7, 12, 0});
  const std::vector<testing::SseEvent> ev = parse_sse_events(sse);
  EXPECT_EQ(sse_event_names(ev), (std::vector<std::string>{
                           "message_start", "content_block_start", "ping", "content_block_delta",
                           "content_block_delta", "content_block_delta", "content_block_stop",  // thinking, signature
                           "content_block_start", "content_block_delta", "content_block_delta",
                           "content_block_stop",  // text
                           "content_block_start", "content_block_delta", "content_block_stop",  // tool_use
                           "message_delta", "message_stop"}));
  EXPECT_EQ(ev[0].data["message"],
            (json{{"id", "msg_1"}, {"type", "message"}, {"role", "assistant"}, {"model", "demo"},
                  {"content", json::array()}, {"stop_reason", nullptr}, {"stop_sequence", nullptr},
                  {"usage", {{"input_tokens", 7}, {"output_tokens", 0}}}}));
  EXPECT_EQ(ev[1].data, (json{{"type", "content_block_start"}, {"index", 0},
                              {"content_block", {{"type", "thinking"}, {"thinking", ""}}}}));
  EXPECT_EQ(ev[3].data["delta"], (json{{"type", "thinking_delta"}, {"thinking", "Let me"}}));
  EXPECT_EQ(ev[5].data["delta"], (json{{"type", "signature_delta"}, {"signature", ""}}));
  EXPECT_EQ(ev[7].data["index"], 1);
  EXPECT_EQ(ev[7].data["content_block"], (json{{"type", "text"}, {"text", ""}}));
  EXPECT_EQ(ev[9].data["delta"], (json{{"type", "text_delta"}, {"text", " now."}}));
  EXPECT_EQ(ev[11].data["content_block"],
            (json{{"type", "tool_use"}, {"id", "call_1"}, {"name", "get_weather"}, {"input", json::object()}}));
  EXPECT_EQ(ev[12].data, (json{{"type", "content_block_delta"}, {"index", 2},
                               {"delta", {{"type", "input_json_delta"}, {"partial_json", R"({"city":"Oslo"})"}}}}));
  EXPECT_EQ(ev[13].data["index"], 2);
  EXPECT_EQ(ev[14].data, (json{{"type", "message_delta"},
                               {"delta", {{"stop_reason", "tool_use"}, {"stop_sequence", nullptr}}},
                               {"usage", {{"input_tokens", 7}, {"output_tokens", 12}}}}));
}

TEST(MessagesWriterTest, AnEmptyReplyStillHasOneTextBlockAndAStopSequenceIsNamed) {
  MessagesWriter w("msg_2", "demo");
  std::string sse = w.stream_open(1, 3);
  ChoiceDelta end = delta("");
  end.finish_reason = "stop";
  end.stop_reason = "END";
  sse += w.stream_delta(end);
  sse += w.stream_close(Usage{3, 1, 0});
  const std::vector<testing::SseEvent> ev = parse_sse_events(sse);
  EXPECT_EQ(sse_event_names(ev), (std::vector<std::string>{"message_start", "content_block_start", "ping",
                                                           "content_block_stop", "message_delta", "message_stop"}));
  EXPECT_EQ(ev[4].data["delta"], (json{{"stop_reason", "stop_sequence"}, {"stop_sequence", "END"}}));
}

TEST(MessagesWriterTest, TheCompleteMessage) {
  MessagesWriter w("msg_3", "demo");
  ChoiceResult c;
  c.text = "Hi.";
  c.reasoning = "greet";
  c.finish_reason = "length";
  EXPECT_EQ(json::parse(w.response({c}, Usage{5, 9, 0})),
            (json{{"id", "msg_3"},
                  {"type", "message"},
                  {"role", "assistant"},
                  {"model", "demo"},
                  {"content", {{{"type", "thinking"}, {"thinking", "greet"}, {"signature", ""}},
                               {{"type", "text"}, {"text", "Hi."}}}},
                  {"stop_reason", "max_tokens"},
                  {"stop_sequence", nullptr},
                  {"usage", {{"input_tokens", 5}, {"output_tokens", 9}}}}));
  c = ChoiceResult{};
  c.tool_calls = {ToolCallView{"call_9", "add", R"({"a":1,"b":2})"}};
  c.finish_reason = "tool_calls";
  const json m = json::parse(w.response({c}, Usage{}));
  EXPECT_EQ(m["content"],
            (json{{{"type", "tool_use"}, {"id", "call_9"}, {"name", "add"}, {"input", {{"a", 1}, {"b", 2}}}}}));
  EXPECT_EQ(m["stop_reason"], "tool_use");
  EXPECT_STREQ(anthropic_stop_reason("stop", ""), "end_turn");
  EXPECT_STREQ(anthropic_stop_reason("stop", "\n\n"), "stop_sequence");
}

TEST(MessagesWriterTest, ErrorsHaveAnthropicsShapeAndTypes) {
  MessagesWriter w("msg_4", "demo");
  const std::vector<testing::SseEvent> ev =
      parse_sse_events(w.stream_error(api_error(503, "the server is shutting down")));
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].data, (json{{"type", "error"},
                              {"error", {{"type", "overloaded_error"}, {"message", "the server is shutting down"}}}}));
  const std::pair<int, const char*> types[] = {{400, "invalid_request_error"}, {401, "authentication_error"},
                                               {403, "permission_error"},      {404, "not_found_error"},
                                               {405, "invalid_request_error"}, {413, "request_too_large"},
                                               {429, "rate_limit_error"},      {500, "api_error"},
                                               {503, "overloaded_error"}};
  for (const auto& [status, type] : types) EXPECT_STREQ(anthropic_error_type(status), type) << status;
}

}  // namespace
}  // namespace kairo::server
