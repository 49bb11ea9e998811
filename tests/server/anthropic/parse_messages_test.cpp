// Anthropic Messages requests without HTTP: the top-level fields (sampling, stop_sequences, thinking, tools,
// tool_choice, prefill) and the exact errors for what is missing, wrong or refused.
#include "server/anthropic/parse_messages.h"

#include <gtest/gtest.h>

#include "../request_parsing.h"

namespace kairo::server::parsing_test {
namespace {

json hello() { return json::array({{{"role", "user"}, {"content", "Hello"}}}); }

json weather_tool() {
  return {{"name", "get_weather"},
          {"description", "Weather in a city"},
          {"input_schema", {{"type", "object"}, {"properties", {{"city", {{"type", "string"}}}}}}}};
}

ApiError error_of(const json& body, MessagesUse use = MessagesUse::Generate) {
  auto r = parse_messages_request(body, kCtx, use);
  EXPECT_FALSE(r.ok()) << body.dump();
  return r.ok() ? ApiError{} : r.error();
}

TEST(ParseMessagesTest, SamplingFieldsAndStopSequencesMapOntoTheChatParams) {
  const json body = {{"model", "demo"},        {"max_tokens", 64},  {"messages", hello()},
                     {"temperature", 0.5},     {"top_p", 0.9},      {"top_k", 40},
                     {"stop_sequences", {"\n\nHuman:", "END"}}, {"stream", true},
                     {"metadata", {{"user_id", "u-1"}}}};
  auto r = parse_messages_request(body, kCtx);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->params.model, "demo");
  EXPECT_EQ(r->params.max_tokens, 64);
  EXPECT_FLOAT_EQ(r->params.sampling.temperature, 0.5f);
  EXPECT_FLOAT_EQ(r->params.sampling.top_p, 0.9f);
  EXPECT_EQ(r->params.sampling.top_k, 40);
  EXPECT_EQ(r->params.stop, (std::vector<std::string>{"\n\nHuman:", "END"}));
  EXPECT_TRUE(r->params.stream);
  EXPECT_EQ(r->params.user, "u-1");
  EXPECT_EQ(r->messages, (json{{{"role", "user"}, {"content", "Hello"}}}));
  EXPECT_TRUE(r->add_generation_prompt);
  EXPECT_FALSE(r->continue_final_message);
}

TEST(ParseMessagesTest, OpenAIOnlyFieldsAreNotHonoured) {
  // n, logprobs and response_format are not Messages fields: a Messages client cannot mean them.
  const json body = {{"max_tokens", 8}, {"messages", hello()}, {"n", 3}, {"logprobs", true},
                     {"response_format", {{"type", "json_object"}}}};
  auto r = parse_messages_request(body, kCtx);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->params.n, 1);
  EXPECT_EQ(r->params.logprobs, -1);
  EXPECT_TRUE(r->params.grammar.empty());
}

TEST(ParseMessagesTest, MaxTokensIsRequiredExceptToCountTokens) {
  const ApiError e = error_of({{"messages", hello()}});
  EXPECT_EQ(e.status, 400);
  EXPECT_EQ(e.param, "max_tokens");
  EXPECT_EQ(e.message, "'max_tokens' is required: the most tokens the reply may have");
  EXPECT_TRUE(parse_messages_request({{"messages", hello()}}, kCtx, MessagesUse::CountTokens).ok());
  EXPECT_EQ(error_of({{"max_tokens", 0}, {"messages", hello()}}).message,
            "'max_tokens' must be an integer from 1 to 1073741824, got 0");
}

TEST(ParseMessagesTest, ToolsBecomeFunctionToolsAndToolChoiceMaps) {
  json body = {{"max_tokens", 8}, {"messages", hello()}, {"tools", {weather_tool()}}};
  auto r = parse_messages_request(body, kCtx);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->tools, (json{{{"type", "function"},
                             {"function",
                              {{"name", "get_weather"},
                               {"description", "Weather in a city"},
                               {"parameters", weather_tool()["input_schema"]}}}}}));
  EXPECT_EQ(r->tool_choice, "auto");

  const std::pair<json, std::string> choices[] = {{{{"type", "auto"}}, "auto"},
                                                  {{{"type", "any"}}, "required"},
                                                  {{{"type", "none"}}, "none"},
                                                  {{{"type", "tool"}, {"name", "get_weather"}}, "function"}};
  for (const auto& [choice, expected] : choices) {
    body["tool_choice"] = choice;
    auto c = parse_messages_request(body, kCtx);
    ASSERT_TRUE(c.ok()) << c.error().message;
    EXPECT_EQ(c->tool_choice, expected) << choice.dump();
    EXPECT_TRUE(c->parallel_tool_calls);
  }
  EXPECT_EQ(parse_messages_request(body, kCtx)->tool_choice_name, "get_weather");
  body["tool_choice"] = {{"type", "any"}, {"disable_parallel_tool_use", true}};
  EXPECT_FALSE(parse_messages_request(body, kCtx)->parallel_tool_calls);
}

TEST(ParseMessagesTest, ToolErrorsNameTheField) {
  const json base = {{"max_tokens", 8}, {"messages", hello()}};
  auto with = [&](const char* key, json value) {
    json b = base;
    b[key] = std::move(value);
    return b;
  };
  ApiError e = error_of(with("tools", {{{"type", "web_search_20250305"}, {"name", "web_search"}}}));
  EXPECT_EQ(e.param, "tools[0].type");
  EXPECT_EQ(e.message, "'tools[0]' is the server tool \"web_search_20250305\", which runs on Anthropic's side; kairo "
                       "takes client tools (name, description, input_schema)");
  e = error_of(with("tools", {{{"name", "f"}}}));
  EXPECT_EQ(e.param, "tools[0].input_schema");
  EXPECT_EQ(e.message, "'tools[0].input_schema' must be a JSON schema object");
  e = error_of(with("tool_choice", {{"type", "any"}}));
  EXPECT_EQ(e.param, "tool_choice");
  EXPECT_EQ(e.message, "'tool_choice' {\"type\": \"any\"} needs 'tools'");
  json named = with("tools", {weather_tool()});
  named["tool_choice"] = {{"type", "tool"}, {"name", "get_time"}};
  e = error_of(named);
  EXPECT_EQ(e.param, "tool_choice.name");
  EXPECT_EQ(e.message, "'tool_choice' names the tool \"get_time\", which is not in 'tools'");
  e = error_of(with("tool_choice", "auto"));
  EXPECT_EQ(e.message, "'tool_choice' must be {\"type\": \"auto\"}, {\"type\": \"any\"}, {\"type\": \"tool\", "
                       "\"name\": ...} or {\"type\": \"none\"}");
}

TEST(ParseMessagesTest, ThinkingSetsTheTemplatesSwitch) {
  json body = {{"max_tokens", 2048}, {"messages", hello()}};
  EXPECT_EQ(parse_messages_request(body, kCtx)->template_kwargs, json::object());
  body["thinking"] = {{"type", "enabled"}, {"budget_tokens", 1024}};
  EXPECT_EQ(parse_messages_request(body, kCtx)->template_kwargs, (json{{"enable_thinking", true}}));
  body["thinking"] = {{"type", "disabled"}};
  EXPECT_EQ(parse_messages_request(body, kCtx)->template_kwargs, (json{{"enable_thinking", false}}));
  body["thinking"] = {{"type", "enabled"}};
  EXPECT_EQ(error_of(body).message, "'thinking.budget_tokens' is required when thinking is enabled");
  body["thinking"] = {{"type", "sometimes"}};
  EXPECT_EQ(error_of(body).param, "thinking.type");
}

TEST(ParseMessagesTest, AFinalAssistantTurnIsAPrefillTheReplyContinues) {
  const json body = {{"max_tokens", 8},
                     {"messages", {{{"role", "user"}, {"content", "Name a color."}},
                                   {{"role", "assistant"}, {"content", "The color is"}}}}};
  auto r = parse_messages_request(body, kCtx);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(r->continue_final_message);
  EXPECT_FALSE(r->add_generation_prompt);
  EXPECT_EQ(r->messages.back(), (json{{"role", "assistant"}, {"content", "The color is"}}));

  const json calls_last = {
      {"max_tokens", 8},
      {"messages",
       {{{"role", "user"}, {"content", "Weather?"}},
        {{"role", "assistant"},
         {"content",
          {{{"type", "tool_use"}, {"id", "toolu_1"}, {"name", "get_weather"}, {"input", json::object()}}}}}}}};
  const ApiError e = error_of(calls_last);
  EXPECT_EQ(e.param, "messages");
  EXPECT_EQ(e.message, "the last message is an assistant turn with tool_use blocks: send their results in a user "
                       "turn of tool_result blocks");
}

TEST(ParseMessagesTest, UnsupportedFeaturesAreRefusedByName) {
  const json base = {{"max_tokens", 8}, {"messages", hello()}};
  json b = base;
  b["mcp_servers"] = json::array({{{"type", "url"}, {"url", "https://example.com"}}});
  EXPECT_EQ(error_of(b).param, "mcp_servers");
  b = base;
  b["container"] = "c-1";
  EXPECT_EQ(error_of(b).message, "'container' is not supported: kairo runs no code execution containers");
}

}  // namespace
}  // namespace kairo::server::parsing_test
