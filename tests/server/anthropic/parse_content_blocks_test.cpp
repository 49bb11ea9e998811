// Anthropic conversations as chat messages: system, text blocks, tool_use -> tool_calls, tool_result -> tool
// messages (named after their call), thinking dropped; images and other blocks refused with the block's path.
#include <gtest/gtest.h>

#include "../request_parsing.h"
#include "server/anthropic/parse_messages.h"

namespace kairo::server::parsing_test {
namespace {

json text(const char* t) { return {{"type", "text"}, {"text", t}}; }

ApiResult<ChatRequest> parse(json messages, json extra = json::object()) {
  json body = {{"max_tokens", 16}, {"messages", std::move(messages)}};
  body.update(extra);
  return parse_messages_request(body, kCtx);
}

TEST(ParseContentBlocksTest, SystemTextBlocksAndATurnOfBlocksBecomeStrings) {
  auto r = parse(json::array({{{"role", "user"}, {"content", {text("one"), text("two")}}}}),
                 {{"system", {text("Be brief."), text("Be kind.")}}});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->messages, (json{{{"role", "system"}, {"content", "Be brief.\nBe kind."}},
                               {{"role", "user"}, {"content", "one\ntwo"}}}));
  r = parse(json::array({{{"role", "user"}, {"content", "hi"}}}), {{"system", "Plain."}});
  EXPECT_EQ(r->messages[0], (json{{"role", "system"}, {"content", "Plain."}}));
}

TEST(ParseContentBlocksTest, ToolUseAndToolResultRoundTripAsToolCallsAndToolMessages) {
  const json messages = json::array(
      {{{"role", "user"}, {"content", "Weather in Oslo and Rome?"}},
       {{"role", "assistant"},
        {"content",
         {{{"type", "thinking"}, {"thinking", "two calls"}, {"signature", "sig"}},
          text("Checking."),
          {{"type", "tool_use"}, {"id", "toolu_1"}, {"name", "get_weather"}, {"input", {{"city", "Oslo"}}}},
          {{"type", "tool_use"}, {"id", "toolu_2"}, {"name", "get_weather"}, {"input", {{"city", "Rome"}}}}}}},
       {{"role", "user"},
        {"content",
         {{{"type", "tool_result"}, {"tool_use_id", "toolu_1"}, {"content", "sunny"}},
          {{"type", "tool_result"}, {"tool_use_id", "toolu_2"}, {"content", {text("rain")}}, {"is_error", false}},
          text("And tomorrow?")}}}});
  auto r = parse(messages);
  ASSERT_TRUE(r.ok()) << r.error().message;
  const json expected =
      json::array({{{"role", "user"}, {"content", "Weather in Oslo and Rome?"}},
                   {{"role", "assistant"},
                    {"content", "Checking."},
                    {"tool_calls",
                     {{{"id", "toolu_1"},
                       {"type", "function"},
                       {"function", {{"name", "get_weather"}, {"arguments", {{"city", "Oslo"}}}}}},
                      {{"id", "toolu_2"},
                       {"type", "function"},
                       {"function", {{"name", "get_weather"}, {"arguments", {{"city", "Rome"}}}}}}}}},
                   {{"role", "tool"}, {"content", "sunny"}, {"name", "get_weather"}, {"tool_call_id", "toolu_1"}},
                   {{"role", "tool"}, {"content", "rain"}, {"name", "get_weather"}, {"tool_call_id", "toolu_2"}},
                   {{"role", "user"}, {"content", "And tomorrow?"}}});
  EXPECT_EQ(r->messages, expected);
}

TEST(ParseContentBlocksTest, AnAssistantTurnOfCallsAloneHasNullContent) {
  auto r = parse(json::array(
      {{{"role", "user"}, {"content", "Weather?"}},
       {{"role", "assistant"},
        {"content", {{{"type", "tool_use"}, {"id", "t1"}, {"name", "get_weather"}, {"input", json::object()}}}}},
       {{"role", "user"}, {"content", {{{"type", "tool_result"}, {"tool_use_id", "t1"}}}}}}));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(r->messages[1]["content"].is_null());
  EXPECT_EQ(r->messages[2], (json{{"role", "tool"}, {"content", ""}, {"name", "get_weather"}, {"tool_call_id", "t1"}}));
}

TEST(ParseContentBlocksTest, BadConversationsGetErrorsNamingTheBlock) {
  struct Case {
    json messages;
    std::string param, message;
  };
  const json image = {{"type", "image"}, {"source", {{"type", "base64"}, {"media_type", "image/png"}, {"data", ""}}}};
  const Case cases[] = {
      {json::array(), "messages", "'messages' must hold at least one message"},
      {json::array({{{"role", "system"}, {"content", "x"}}}), "messages[0].role",
       "'messages[0].role' is \"system\"; messages are \"user\" or \"assistant\" turns (the system prompt goes in the "
       "top-level 'system')"},
      {json::array({{{"role", "user"}}}), "messages[0].content",
       "'messages[0].content' must be a string or an array of content blocks"},
      {json::array({{{"role", "user"}, {"content", {text("look"), image}}}}), "messages[0].content[1].type",
       "'messages[0].content[1]' is a \"image\" block; kairo serves text models and takes text and tool_result blocks "
       "in user turns"},
      {json::array({{{"role", "user"}, {"content", {{{"type", "text"}}}}}}), "messages[0].content[0].text",
       "'messages[0].content[0].text' must be a string"},
      {json::array({{{"role", "user"}, {"content", "x"}},
                    {{"role", "assistant"},
                     {"content", {{{"type", "tool_use"}, {"id", "t"}, {"name", "f"}, {"input", "{}"}}}}},
                    {{"role", "user"}, {"content", "y"}}}),
       "messages[1].content[0].input", "'messages[1].content[0].input' must be an object"},
      {json::array({{{"role", "user"}, {"content", {{{"type", "tool_result"}, {"tool_use_id", "t"},
                                                     {"content", {image}}}}}}}),
       "messages[0].content[0].content[0].type",
       "'messages[0].content[0].content[0]' is a \"image\" block; kairo serves text models and takes text blocks "
       "here"},
  };
  for (const Case& c : cases) {
    auto r = parse(c.messages);
    ASSERT_FALSE(r.ok()) << c.messages.dump();
    EXPECT_EQ(r.error().param, c.param) << c.messages.dump();
    EXPECT_EQ(r.error().message, c.message);
  }
}

}  // namespace
}  // namespace kairo::server::parsing_test
