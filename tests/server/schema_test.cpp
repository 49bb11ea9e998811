// The OpenAI schema layer without HTTP: parsing corner cases and the exact JSON the renderers write.
#include <gtest/gtest.h>

#include "request_parsing.h"
#include "server/openai/parse_request.h"
#include "server/openai/render_response.h"

namespace kairo::server::parsing_test {
namespace {

TEST(ParseTest, IntegralFloatsAreIntegers) {
  auto r = parse_completion_request(json{{"prompt", "x"}, {"max_tokens", 12.0}, {"n", 2.0}}, kCtx);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->params.max_tokens, 12);
  EXPECT_EQ(r->params.n, 2);
}

TEST(ParseTest, NullMeansUnset) {
  auto r = parse_completion_request(
      json{{"prompt", "x"}, {"max_tokens", nullptr}, {"temperature", nullptr}, {"stop", nullptr}, {"seed", nullptr}},
      kCtx);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_FALSE(r->params.max_tokens.has_value());
  EXPECT_FLOAT_EQ(r->params.sampling.temperature, 1.0f);
  EXPECT_FALSE(r->params.sampling.seed.has_value());
}

TEST(ParseTest, NegativeSeedWrapsToUnsigned) {
  auto r = parse_completion_request(json{{"prompt", "x"}, {"seed", -1}}, kCtx);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r->params.sampling.seed, ~uint64_t{0});
}

TEST(ParseTest, MaxTokensLimitIsEnforced) {
  RequestLimits limits;
  limits.max_tokens = 100;
  auto r = parse_completion_request(json{{"prompt", "x"}, {"max_tokens", 101}}, ParseContext{limits, 512});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "'max_tokens' is 101; this server allows at most 100 (its --max-tokens-limit)");
}

TEST(ParseTest, ChatMessagesAreNormalised) {
  const json body = {{"messages",
                      {{{"role", "developer"}, {"content", "rules"}, {"name", "ops"}},
                       {{"role", "user"}, {"content", json::array({{{"type", "text"}, {"text", "a"}}})}}}},
                     {"continue_final_message", true},
                     {"add_generation_prompt", false},
                     {"chat_template_kwargs", {{"enable_thinking", false}}}};
  auto r = parse_chat_request(body, kCtx);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->messages, (json{{{"role", "developer"}, {"content", "rules"}, {"name", "ops"}},
                               {{"role", "user"}, {"content", "a"}}}));
  EXPECT_FALSE(r->add_generation_prompt);
  EXPECT_TRUE(r->continue_final_message);
  EXPECT_EQ(r->template_kwargs, (json{{"enable_thinking", false}}));
  EXPECT_TRUE(r->tools.is_null());
}

TEST(ParseTest, LimitsOnMessagesAndTools) {
  RequestLimits limits;
  limits.max_messages = 2;
  limits.max_tools = 1;
  const json msg = {{"role", "user"}, {"content", "x"}};
  auto r = parse_chat_request(json{{"messages", {msg, msg, msg}}}, ParseContext{limits, 512});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "3 messages were given; at most 2 are accepted (the server's --max-messages)");
  const json tool = {{"type", "function"}, {"function", {{"name", "f"}}}};
  r = parse_chat_request(json{{"messages", {msg}}, {"tools", {tool, tool}}}, ParseContext{limits, 512});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "2 tools were given; at most 1 are accepted (the server's --max-tools)");
}

TEST(RenderTest, ErrorHasTheFourOpenAIFields) {
  EXPECT_EQ(render_error(invalid_param("n", "bad n")),
            R"({"error":{"code":null,"message":"bad n","param":"n","type":"invalid_request_error"}})");
}

TEST(RenderTest, ChatRoleChunkExactly) {
  ResponseMeta meta{ApiKind::Chat, "chatcmpl-1", 42, "m"};
  ChoiceDelta d;
  d.role = true;
  EXPECT_EQ(render_chunk(meta, d, false),
            R"({"choices":[{"delta":{"content":"","role":"assistant"},"finish_reason":null,"index":0,"logprobs":null}],)"
            R"("created":42,"id":"chatcmpl-1","model":"m","object":"chat.completion.chunk"})");
}

TEST(RenderTest, CompletionFinalChunkExactly) {
  ResponseMeta meta{ApiKind::Completion, "cmpl-1", 42, "m"};
  ChoiceDelta d;
  d.index = 1;
  d.text = "end";
  d.finish_reason = "stop";
  d.stop_reason = "\n";
  EXPECT_EQ(render_chunk(meta, d, true),
            R"({"choices":[{"finish_reason":"stop","index":1,"logprobs":null,"stop_reason":"\n","text":"end"}],)"
            R"("created":42,"id":"cmpl-1","model":"m","object":"text_completion","usage":null})");
}

TEST(RenderTest, InvalidUtf8IsReplacedNotFatal) {
  ResponseMeta meta{ApiKind::Completion, "cmpl-1", 1, "m"};
  ChoiceResult c;
  c.text = "ok\xe2\x82";  // a truncated euro sign
  c.finish_reason = "length";
  const json j = json::parse(render_response(meta, {c}, Usage{1, 1, 0}));
  EXPECT_EQ(j["choices"][0]["text"], "ok\xef\xbf\xbd");
}

TEST(RenderTest, NonFiniteLogprobsAreWrittenAsMinus9999) {
  ResponseMeta meta{ApiKind::Chat, "c", 1, "m"};
  ChoiceResult c;
  c.with_logprobs = true;
  c.logprobs.push_back({"a", -std::numeric_limits<float>::infinity(), {}});
  const json j = json::parse(render_response(meta, {c}, Usage{}));
  EXPECT_EQ(j["choices"][0]["logprobs"]["content"][0]["logprob"], -9999.0);
}

}  // namespace
}  // namespace kairo::server::parsing_test

namespace kairo::server::parsing_test {
namespace {

TEST(ParseTest, KeyOrderOfToolsAndMessagesIsKept) {
  // Templates dump tools with tojson; transformers keeps the client's key order, so kairo must too.
  const std::string text =
      R"({"messages":[{"role":"user","content":"x"}],)"
      R"("tools":[{"type":"function","function":{"name":"f","parameters":{"z":1,"a":2}}}]})";
  auto body = parse_json_body(text, 64);
  ASSERT_TRUE(body.ok());
  auto r = parse_chat_request(*body, kCtx);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->tools.dump(), R"([{"type":"function","function":{"name":"f","parameters":{"z":1,"a":2}}}])");
  EXPECT_EQ(r->messages.dump(), R"([{"role":"user","content":"x"}])");
}

}  // namespace
}  // namespace kairo::server::parsing_test
