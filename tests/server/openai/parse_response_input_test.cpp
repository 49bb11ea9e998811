// Responses API input items as chat messages: messages with content parts, function_call items joined onto the
// assistant turn before them, function_call_output items as tool messages, reasoning items dropped, and the errors.
#include <gtest/gtest.h>

#include "../request_parsing.h"
#include "server/openai/parse_request.h"

namespace kairo::server::parsing_test {
namespace {

TEST(ParseResponseInputTest, AReplayedConversationWithACallAndItsOutput) {
  const json input = json::array(
      {{{"role", "developer"}, {"content", "Use tools."}},
       {{"type", "message"}, {"role", "user"}, {"content", {{{"type", "input_text"}, {"text", "Weather in Oslo?"}}}}},
       {{"type", "reasoning"}, {"id", "rs_1"}, {"summary", json::array()}},
       {{"type", "message"}, {"id", "msg_1"}, {"status", "completed"}, {"role", "assistant"},
        {"content", {{{"type", "output_text"}, {"text", "Checking."}, {"annotations", json::array()}}}}},
       {{"type", "function_call"}, {"id", "fc_1"}, {"call_id", "call_1"}, {"name", "get_weather"},
        {"arguments", R"({"city":"Oslo"})"}},
       {{"type", "function_call_output"}, {"call_id", "call_1"}, {"output", "sunny"}}});
  auto r = parse_responses_request({{"input", input}, {"instructions", "Be brief."}}, kCtx);
  ASSERT_TRUE(r.ok()) << r.error().message;
  const json expected =
      json::array({{{"role", "system"}, {"content", "Be brief."}},
                   {{"role", "developer"}, {"content", "Use tools."}},
                   {{"role", "user"}, {"content", "Weather in Oslo?"}},
                   {{"role", "assistant"},
                    {"content", "Checking."},
                    {"tool_calls",
                     {{{"id", "call_1"},
                       {"type", "function"},
                       {"function", {{"name", "get_weather"}, {"arguments", {{"city", "Oslo"}}}}}}}}},
                   {{"role", "tool"}, {"content", "sunny"}, {"name", "get_weather"}, {"tool_call_id", "call_1"}}});
  EXPECT_EQ(r->chat.messages, expected);
}

TEST(ParseResponseInputTest, ACallWithNoAssistantTextOpensATurnWithNullContent) {
  const json input = json::array(
      {{{"role", "user"}, {"content", "Add 1 and 2."}},
       {{"type", "function_call"}, {"call_id", "c1"}, {"name", "add"}, {"arguments", R"({"a":1,"b":2})"}},
       {{"type", "function_call_output"}, {"call_id", "c1"}, {"output", "3"}}});
  auto r = parse_responses_request({{"input", input}}, kCtx);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(r->chat.messages[1]["content"].is_null());
  EXPECT_EQ(r->chat.messages[1]["tool_calls"].size(), 1u);
}

TEST(ParseResponseInputTest, BadInputGetsErrorsNamingTheItem) {
  struct Case {
    json input;
    std::string param, message;
  };
  const Case cases[] = {
      {nullptr, "input", "'input' (a string, or an array of input items) is required"},
      {json::array(), "input", "'input' must hold at least one item"},
      {42, "input", "'input' must be a string or an array of input items, got an integer"},
      {json::array({{{"role", "tool"}, {"content", "x"}}}), "input[0].role",
       "'input[0].role' is \"tool\"; expected user, assistant, system or developer"},
      {json::array({{{"role", "user"}, {"content", {{{"type", "input_image"}, {"image_url", "https://x"}}}}}}),
       "input[0].content[0].type",
       "'input[0].content[0]' is an \"input_image\" part; kairo serves text models and takes input_text and "
       "output_text parts"},
      {json::array({{{"type", "item_reference"}, {"id", "msg_1"}}}), "input[0].type",
       "'input[0]' refers to a stored item; kairo's /v1/responses is stateless and stores none: send the item itself"},
      {json::array({{{"type", "web_search_call"}, {"id", "ws_1"}}}), "input[0].type",
       "'input[0]' is a \"web_search_call\" item; kairo takes message, function_call, function_call_output and "
       "reasoning items"},
      {json::array({{{"type", "function_call"}, {"call_id", "c"}, {"name", "f"}, {"arguments", json::object()}}}),
       "input[0].arguments", "'input[0].arguments' must be a string"},
      {json::array({{{"type", "reasoning"}, {"summary", json::array()}}}), "input",
       "'input' holds no message to answer, only reasoning items"},
  };
  for (const Case& c : cases) {
    json body = json::object();
    if (!c.input.is_null()) body["input"] = c.input;
    auto r = parse_responses_request(body, kCtx);
    ASSERT_FALSE(r.ok()) << body.dump();
    EXPECT_EQ(r.error().param, c.param) << body.dump();
    EXPECT_EQ(r.error().message, c.message);
  }
}

}  // namespace
}  // namespace kairo::server::parsing_test
