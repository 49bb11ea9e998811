// The bad-input suite over raw HTTP: each hostile or wrong request gets the right status and an OpenAI-style error
// that names the problem; none reaches the engine; the server stays healthy.
#include "server_fixture.h"

namespace kairo::server::testing {
namespace {

using json = nlohmann::json;

struct BadCase {
  const char* name;
  const char* path;
  std::string body;
  int status;
  std::string message;  // exact, or a prefix when it ends with "..."
  const char* param;    // nullptr: error.param is null
  const char* code = nullptr;
};

std::string nested(int depth) { return std::string(depth, '[') + std::string(depth, ']'); }

std::string many_stops(int n) {
  json stops = json::array();
  for (int i = 0; i < n; ++i) stops.push_back("s" + std::to_string(i));
  return json{{"prompt", "hi"}, {"stop", stops}}.dump();
}

std::string ids_prompt(int n, int max_tokens) {
  std::vector<int32_t> ids(n, 300);
  return json{{"prompt", ids}, {"max_tokens", max_tokens}}.dump();
}

const char* kC = "/v1/completions";
const char* kChat = "/v1/chat/completions";

std::vector<BadCase> bad_cases() {
  return {
      {"truncated_json", kC, R"({"prompt": "hel)", 400,
       "the request body is not valid JSON: parse error at line 1, column 16: syntax error while parsing value - "
       "invalid string: missing closing quote; last read: '\"hel'",
       nullptr},
      {"trailing_comma", kC, R"({"prompt": "x",})", 400, "the request body is not valid JSON: ...", nullptr},
      {"nan_literal", kC, R"({"prompt": "x", "temperature": NaN})", 400, "the request body is not valid JSON: ...",
       nullptr},
      {"number_overflow", kC, R"({"prompt": "x", "temperature": 1e400})", 400,
       "the request body is not valid JSON: number overflow parsing '1e400'", nullptr},
      {"invalid_utf8", kC, "{\"prompt\": \"\xff\xfe\"}", 400, "the request body is not valid JSON: ...", nullptr},
      {"deeply_nested", kC, nested(100000), 400,
       "the request body nests JSON deeper than 64 levels (the server's --max-json-depth)", nullptr},
      {"nested_in_field", kC, "{\"prompt\": " + nested(70) + "}", 400,
       "the request body nests JSON deeper than 64 levels (the server's --max-json-depth)", nullptr},
      {"not_an_object", kC, "[1, 2]", 400, "the request body must be a JSON object, got an array", nullptr},
      {"empty_body", kC, "", 400, "the request body is empty; send a JSON object", nullptr},
      {"missing_prompt", kC, R"({"max_tokens": 3})", 400, "'prompt' is required: ...", "prompt"},
      {"empty_prompt", kC, R"({"prompt": ""})", 400, "'prompt' must not be empty", "prompt"},
      {"empty_prompt_array", kC, R"({"prompt": []})", 400, "'prompt' must not be an empty array", "prompt"},
      {"prompt_wrong_type", kC, R"({"prompt": 5})", 400, "'prompt' must be a string or an array, got an integer",
       "prompt"},
      {"mixed_prompt_array", kC, R"({"prompt": ["a", {"x": 1}]})", 400,
       "'prompt[1]' must be a string or an array of token ids, got an object", "prompt[1]"},
      {"max_tokens_string", kC, R"({"prompt": "x", "max_tokens": "10"})", 400,
       "'max_tokens' must be an integer, got a string", "max_tokens"},
      {"max_tokens_fraction", kC, R"({"prompt": "x", "max_tokens": 10.5})", 400,
       "'max_tokens' must be an integer, got a number", "max_tokens"},
      {"max_tokens_zero", kC, R"({"prompt": "x", "max_tokens": 0})", 400,
       "'max_tokens' must be an integer from 1 to 1073741824, got 0", "max_tokens"},
      {"max_tokens_negative", kC, R"({"prompt": "x", "max_tokens": -5})", 400,
       "'max_tokens' must be an integer from 1 to 1073741824, got -5", "max_tokens"},
      {"max_tokens_huge", kC, R"({"prompt": "x", "max_tokens": 1e20})", 400,
       "'max_tokens' must be an integer from 1 to 1073741824, got 1e+20", "max_tokens"},
      {"max_tokens_u64", kC, R"({"prompt": "x", "max_tokens": 18446744073709551615})", 400,
       "'max_tokens' must be an integer from 1 to 1073741824, got 18446744073709551615", "max_tokens"},
      {"temperature_negative", kC, R"({"prompt": "x", "temperature": -1})", 400,
       "'temperature' must be a number from 0 to 2, got -1", "temperature"},
      {"temperature_string", kC, R"({"prompt": "x", "temperature": "hot"})", 400,
       "'temperature' must be a number, got a string", "temperature"},
      {"top_p_above_one", kC, R"({"prompt": "x", "top_p": 1.5})", 400, "'top_p' must be a number from 0 to 1, got 1.5",
       "top_p"},
      {"top_k_below_minus_one", kC, R"({"prompt": "x", "top_k": -2})", 400,
       "'top_k' must be an integer from -1 to 2147483647, got -2", "top_k"},
      {"presence_penalty_range", kC, R"({"prompt": "x", "presence_penalty": 3})", 400,
       "'presence_penalty' must be a number from -2 to 2, got 3", "presence_penalty"},
      {"repetition_penalty_zero", kC, R"({"prompt": "x", "repetition_penalty": 0})", 400,
       "'repetition_penalty' must be greater than 0 (1 = off)", "repetition_penalty"},
      {"seed_string", kC, R"({"prompt": "x", "seed": "42"})", 400, "'seed' must be an integer, got a string", "seed"},
      // 2^63 as a float: INT64_MAX converts to exactly this double, so a plain `d > max` check let it reach an
      // undefined float-to-int64 conversion.
      {"seed_two_to_the_63", kC, R"({"prompt": "x", "seed": 9223372036854775808.0})", 400,
       "'seed' must be an integer from -9223372036854775808 to 9223372036854775807, got 9.223372036854776e+18",
       "seed"},
      {"stream_not_bool", kC, R"({"prompt": "x", "stream": 1})", 400,
       "'stream' must be a boolean (true or false), got an integer", "stream"},
      {"n_zero", kC, R"({"prompt": "x", "n": 0})", 400, "'n' must be an integer from 1 to 16, got 0", "n"},
      {"n_huge", kC, R"({"prompt": "x", "n": 100000})", 400, "'n' must be an integer from 1 to 16, got 100000", "n"},
      {"n_times_prompts", kC, R"({"prompt": ["a","b","c"], "n": 6})", 400,
       "3 prompts x n=6 = 18 choices; at most 16 are accepted per request (the server's --max-n)", "n"},
      {"logprobs_over_cap", kC, R"({"prompt": "x", "logprobs": 50})", 400,
       "'logprobs' must be an integer from 0 to 20, got 50", "logprobs"},
      {"ten_thousand_stops", kC, many_stops(10000), 400,
       "10000 stop strings were given; at most 16 are accepted (the server's --max-stop)", "stop"},
      {"long_stop", kC, json{{"prompt", "x"}, {"stop", std::string(1000, 'a')}}.dump(), 400,
       "stop string of 1000 bytes is longer than the limit of 256 bytes (the server's --max-stop-bytes)", "stop"},
      {"empty_stop", kC, R"({"prompt": "x", "stop": ["ok", ""]})", 400, "stop strings must not be empty", "stop[1]"},
      {"stop_wrong_type", kC, R"({"prompt": "x", "stop": 7})", 400,
       "'stop' must be a string or an array of strings, got an integer", "stop"},
      {"out_of_vocab_prompt", kC, R"({"prompt": [1, 99999]})", 400,
       "'prompt[1]' is 99999, which is not a token id: this model's ids run from 0 to 511", "prompt"},
      {"negative_prompt_id", kC, R"({"prompt": [1, -3]})", 400,
       "'prompt[1]' is -3, which is not a token id: this model's ids run from 0 to 511", "prompt"},
      {"float_prompt_id", kC, R"({"prompt": [1, 2.5]})", 400,
       "'prompt[1]' must be a token id (an integer), got a number", "prompt"},
      {"logit_bias_out_of_vocab", kC, R"({"prompt": "x", "logit_bias": {"99999": 1}})", 400,
       "logit_bias key \"99999\" is not a token id: this model's ids run from 0 to 511", "logit_bias"},
      {"logit_bias_non_numeric_key", kC, R"({"prompt": "x", "logit_bias": {"abc": 1}})", 400,
       "logit_bias key \"abc\" is not a token id: this model's ids run from 0 to 511", "logit_bias"},
      {"logit_bias_value_range", kC, R"({"prompt": "x", "logit_bias": {"5": 500}})", 400,
       "logit_bias[5] must be a number from -100 to 100, got 500", "logit_bias"},
      {"logit_bias_not_object", kC, R"({"prompt": "x", "logit_bias": [1, 2]})", 400,
       "'logit_bias' must be an object mapping token ids to biases, got an array", "logit_bias"},
      {"stop_token_out_of_vocab", kC, R"({"prompt": "x", "stop_token_ids": [512]})", 400,
       "'stop_token_ids[0]' is 512, which is not a token id: this model's ids run from 0 to 511", "stop_token_ids"},
      {"stream_options_without_stream", kC, R"({"prompt": "x", "stream_options": {"include_usage": true}})", 400,
       "'stream_options' is only allowed when 'stream' is true", "stream_options"},
      {"echo_unsupported", kC, R"({"prompt": "x", "echo": true})", 400, "'echo' is not supported", "echo"},
      {"best_of", kC, R"({"prompt": "x", "best_of": 3})", 400, "'best_of' other than 1 is not supported; use 'n'",
       "best_of"},
      {"unknown_model", kC, R"({"prompt": "x", "model": "gpt-4"})", 404,
       "The model \"gpt-4\" does not exist; this server serves \"demo\"", "model", "model_not_found"},
      {"context_overflow", kC, ids_prompt(250, 10), 400,
       "This model's maximum context length is 256 tokens. However, you requested 260 tokens (250 in the prompt, 10 "
       "for the completion). Please reduce the length of the prompt or the completion (max_tokens).",
       "max_tokens", "context_length_exceeded"},
      {"prompt_longer_than_context", kC, ids_prompt(300, 1), 400,
       "This model's maximum context length is 256 tokens. However, your prompt is 300 tokens, which leaves no room "
       "for the completion. Please shorten your prompt.",
       "prompt", "context_length_exceeded"},
      {"empty_messages", kChat, R"({"messages": []})", 400, "'messages' must hold at least one message", "messages"},
      {"missing_messages", kChat, R"({"max_tokens": 2})", 400, "'messages' (an array of messages) is required",
       "messages"},
      {"messages_not_array", kChat, R"({"messages": "hi"})", 400, "'messages' must be an array, got a string",
       "messages"},
      {"message_not_object", kChat, R"({"messages": ["hi"]})", 400, "'messages[0]' must be an object, got a string",
       "messages[0]"},
      {"unknown_role", kChat, R"({"messages": [{"role": "wizard", "content": "hi"}]})", 400,
       "'messages[0].role' is \"wizard\"; expected one of system, developer, user, assistant, tool",
       "messages[0].role"},
      {"missing_content", kChat, R"({"messages": [{"role": "user"}]})", 400, "'messages[0].content' is required",
       "messages[0].content"},
      {"image_part", kChat,
       R"({"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}}]}]})", 400,
       "'messages[0].content[0]' has type \"image_url\"; only \"text\" content parts are supported",
       "messages[0].content[0].type"},
      {"top_logprobs_without_logprobs", kChat, R"({"messages": [{"role": "user", "content": "x"}], "top_logprobs": 2})",
       400, "'top_logprobs' needs 'logprobs': true", "top_logprobs"},
      {"chat_logprobs_int", kChat, R"({"messages": [{"role": "user", "content": "x"}], "logprobs": 3})", 400,
       "'logprobs' must be a boolean (true or false), got an integer", "logprobs"},
      {"tools_not_array", kChat, R"({"messages": [{"role": "user", "content": "x"}], "tools": {}})", 400,
       "'tools' must be an array, got an object", "tools"},
      {"tool_wrong_type", kChat, R"({"messages": [{"role": "user", "content": "x"}], "tools": [{"type": "web"}]})",
       400, "'tools[0].type' must be \"function\"", "tools[0].type"},
      {"tool_choice_malformed", kChat,
       R"({"messages": [{"role": "user", "content": "x"}], "tool_choice": {"type": "function"}})", 400,
       "'tool_choice' must be \"none\", \"auto\", \"required\" or {\"type\": \"function\", \"function\": "
       "{\"name\": ...}}",
       "tool_choice"},
      {"tool_choice_required_without_tools", kChat,
       R"({"messages": [{"role": "user", "content": "x"}], "tool_choice": "required"})", 400,
       "'tool_choice' \"required\" needs 'tools'", "tool_choice"},
      {"tool_choice_unknown_function", kChat,
       R"({"messages": [{"role": "user", "content": "x"}], "tools": [{"type": "function", "function": {"name": "a"}}], "tool_choice": {"type": "function", "function": {"name": "b"}}})",
       400, "'tool_choice' names the function \"b\", which is not in 'tools'", "tool_choice.function.name"},
      {"response_format_unknown_type", kChat,
       R"({"messages": [{"role": "user", "content": "x"}], "response_format": {"type": "yaml"}})", 400,
       "response_format type \"yaml\" is not one of \"text\", \"json_object\", \"json_schema\"",
       "response_format.type"},
      {"json_schema_without_schema", kChat,
       R"({"messages": [{"role": "user", "content": "x"}], "response_format": {"type": "json_schema", "json_schema": {"name": "a"}}})",
       400, "'response_format.json_schema.schema' is required", "response_format.json_schema.schema"},
      {"json_schema_unsupported_keyword", kChat,
       R"({"messages": [{"role": "user", "content": "x"}], "response_format": {"type": "json_schema", "json_schema": {"name": "a", "schema": {"type": "object", "properties": {"a": {"type": "string", "contentEncoding": "base64"}}}}}})",
       400,
       "'response_format.json_schema.schema': json_schema: the keyword 'contentEncoding' is not supported; remove it "
       "or express the constraint with supported keywords (see docs/structured-output.md) (at #/properties/a)",
       "response_format.json_schema.schema"},
      {"two_constraints", kC, R"({"prompt": "x", "grammar": "root ::= \"a\"", "json_schema": {}})", 400,
       "give one output constraint, not several: json_schema, grammar", "grammar"},
      {"structured_outputs_unknown", kC, R"({"prompt": "x", "structured_outputs": {"xml": "a"}})", 400,
       "structured_outputs.\"xml\" is not supported; give one of json, regex, choice, grammar, json_object",
       "structured_outputs.xml"},
      {"choice_empty", kC, R"({"prompt": "x", "structured_outputs": {"choice": []}})", 400,
       "'structured_outputs.choice' must be a non-empty array of strings, got an empty array",
       "structured_outputs.choice"},
      {"regex_lookahead", kC, R"j({"prompt": "x", "guided_regex": "a(?=b)"})j", 400,
       "'guided_regex': regex: lookaround assertions are not supported at offset 2", "guided_regex"},
      {"grammar_syntax_error", kC, R"({"prompt": "x", "grammar": "root ::= \"a"})", 400,
       "'grammar': the output grammar is invalid: grammar: line 1, column 12: unterminated string literal: add the "
       "closing '\"'",
       "grammar"},
      {"detokenize_out_of_vocab", "/detokenize", R"({"tokens": [1, 5000]})", 400,
       "'tokens[1]' is 5000, which is not a token id: this model's ids run from 0 to 511", "tokens"},
      {"tokenize_missing_prompt", "/tokenize", R"({})", 400, "'prompt' (a string) or 'messages' is required",
       "prompt"},
  };
}

class BadInputTest : public ServerTest, public ::testing::WithParamInterface<BadCase> {
 protected:
  void SetUp() override { start(); }
};

TEST_P(BadInputTest, GetsTheRightStatusAndMessageAndNothingReachesTheEngine) {
  const BadCase& c = GetParam();
  const auto r = request(port_, "POST", c.path, c.body);
  ASSERT_EQ(r.status, c.status) << r.body;
  EXPECT_EQ(r.header("content-type"), "application/json");
  const json j = r.json();
  ASSERT_TRUE(j.contains("error")) << r.body;
  const json& e = j["error"];
  const std::string message = e["message"];
  const std::string expected = c.message;
  if (expected.size() > 3 && expected.compare(expected.size() - 3, 3, "...") == 0) {
    EXPECT_EQ(message.rfind(expected.substr(0, expected.size() - 3), 0), 0u) << message;
  } else {
    EXPECT_EQ(message, expected);
  }
  EXPECT_EQ(e["type"], "invalid_request_error");
  if (c.param) {
    EXPECT_EQ(e["param"], c.param);
  } else {
    EXPECT_TRUE(e["param"].is_null()) << e["param"];
  }
  if (c.code) {
    EXPECT_EQ(e["code"], c.code);
  }
  EXPECT_TRUE(engine_->submitted().empty());
  EXPECT_EQ(engine_->n_invalid(), 0);
  // Still healthy, and the next good request works.
  EXPECT_EQ(get("/health").status, 200);
  EXPECT_EQ(post("/v1/completions", {{"prompt", "ok"}, {"max_tokens", 1}}).status, 200);
  EXPECT_EQ(engine_->stats().kv_usage, 0.0);
}

INSTANTIATE_TEST_SUITE_P(All, BadInputTest, ::testing::ValuesIn(bad_cases()),
                         [](const ::testing::TestParamInfo<BadCase>& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace kairo::server::testing
