// Responses API requests without HTTP: sampling and max_output_tokens, function tools, text.format, what the
// Response object echoes, and the refusals of everything that needs stored state.
#include <gtest/gtest.h>

#include "../request_parsing.h"
#include "server/openai/parse_request.h"

namespace kairo::server::parsing_test {
namespace {

ApiError error_of(json body) {
  if (!body.contains("input")) body["input"] = "hi";
  auto r = parse_responses_request(body, kCtx);
  EXPECT_FALSE(r.ok()) << body.dump();
  return r.ok() ? ApiError{} : r.error();
}

TEST(ParseResponsesTest, FieldsMapOntoTheChatRequestAndAreEchoed) {
  const json body = {{"model", "demo"},       {"input", "Tell me a story."}, {"instructions", "Be brief."},
                     {"max_output_tokens", 32}, {"temperature", 0.2},        {"top_p", 0.5},
                     {"stream", true},        {"store", true},               {"metadata", {{"k", "v"}}}};
  auto r = parse_responses_request(body, kCtx);
  ASSERT_TRUE(r.ok()) << r.error().message;
  const ChatRequest& chat = r->chat;
  EXPECT_EQ(chat.params.model, "demo");
  EXPECT_EQ(chat.params.max_tokens, 32);
  EXPECT_FLOAT_EQ(chat.params.sampling.temperature, 0.2f);
  EXPECT_TRUE(chat.params.stream);
  EXPECT_EQ(chat.messages, (json{{{"role", "system"}, {"content", "Be brief."}},
                                 {{"role", "user"}, {"content", "Tell me a story."}}}));
  EXPECT_EQ(r->echo, (json{{"instructions", "Be brief."},
                           {"max_output_tokens", 32},
                           {"metadata", {{"k", "v"}}},
                           {"parallel_tool_calls", true},
                           {"temperature", 0.2},
                           {"text", {{"format", {{"type", "text"}}}}},
                           {"tool_choice", "auto"},
                           {"tools", json::array()},
                           {"top_p", 0.5},
                           {"user", nullptr}}));
}

TEST(ParseResponsesTest, FunctionToolsToolChoiceAndTextFormat) {
  const json tool = {{"type", "function"},
                     {"name", "get_weather"},
                     {"description", "Weather"},
                     {"parameters", {{"type", "object"}, {"properties", {{"city", {{"type", "string"}}}}}}},
                     {"strict", true}};
  json body = {{"input", "Weather?"},
               {"tools", {tool}},
               {"tool_choice", {{"type", "function"}, {"name", "get_weather"}}},
               {"parallel_tool_calls", false}};
  auto r = parse_responses_request(body, kCtx);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->chat.tools,
            (json{{{"type", "function"},
                   {"function",
                    {{"name", "get_weather"}, {"description", "Weather"}, {"parameters", tool["parameters"]}}}}}));
  EXPECT_EQ(r->chat.tool_choice, "function");
  EXPECT_EQ(r->chat.tool_choice_name, "get_weather");
  EXPECT_FALSE(r->chat.parallel_tool_calls);
  EXPECT_EQ(r->echo["tools"], json{tool});

  body = {{"input", "x"}, {"text", {{"format", {{"type", "json_schema"}, {"name", "v"},
                                                {"schema", {{"type", "object"}}}, {"strict", true}}}}}};
  r = parse_responses_request(body, kCtx);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_FALSE(r->chat.params.grammar.empty());
  EXPECT_EQ(r->chat.params.grammar_param, "text.format");
  body["text"]["format"] = {{"type", "json_object"}};
  EXPECT_EQ(parse_responses_request(body, kCtx)->chat.params.grammar_param, "text.format");
}

TEST(ParseResponsesTest, StatefulFeaturesAreRefusedButStoreIsAccepted) {
  EXPECT_TRUE(parse_responses_request({{"input", "x"}, {"store", false}}, kCtx).ok());
  ApiError e = error_of({{"previous_response_id", "resp_123"}});
  EXPECT_EQ(e.status, 400);
  EXPECT_EQ(e.param, "previous_response_id");
  EXPECT_EQ(e.message, "'previous_response_id' cannot be resolved: kairo's /v1/responses is stateless and stores no "
                       "responses; send the whole conversation in 'input' (earlier output items included)");
  EXPECT_EQ(error_of({{"conversation", "conv_1"}}).param, "conversation");
  EXPECT_EQ(error_of({{"background", true}}).param, "background");
  EXPECT_EQ(error_of({{"prompt", {{"id", "pmpt_1"}}}}).param, "prompt");
  EXPECT_EQ(error_of({{"store", "yes"}}).message, "'store' must be a boolean (true or false), got a string");
}

TEST(ParseResponsesTest, BadFieldsNameTheResponsesField) {
  EXPECT_EQ(error_of({{"max_output_tokens", 0}}).message,
            "'max_output_tokens' must be an integer from 1 to 1073741824, got 0");
  ApiError e = error_of({{"tools", {{{"type", "web_search"}}}}});
  EXPECT_EQ(e.param, "tools[0].type");
  EXPECT_EQ(e.message, "'tools[0]' is a \"web_search\" tool; kairo runs function tools only (the others run on "
                       "OpenAI's side)");
  e = error_of({{"tool_choice", {{"type", "function"}, {"name", "nope"}}}});
  EXPECT_EQ(e.param, "tool_choice.name");
  EXPECT_EQ(e.message, "'tool_choice' names the function \"nope\", which is not in 'tools'");
  e = error_of({{"text", {{"format", {{"type", "json_schema"}, {"name", "v"}}}}}});
  EXPECT_EQ(e.param, "text.format.schema");
  e = error_of(
      {{"text", {{"format", {{"type", "json_schema"}, {"schema", {{"type", "string"}, {"format", "hostname"}}}}}}}});
  EXPECT_EQ(e.param, "text.format.schema");
  EXPECT_EQ(error_of({{"top_logprobs", 2}}).param, "top_logprobs");
}

}  // namespace
}  // namespace kairo::server::parsing_test
