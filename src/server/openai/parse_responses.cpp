// POST /v1/responses, stateless. kairo stores nothing: `store` is accepted whatever its value (OpenAI's default is
// true, and clients send it) and nothing is kept, which the Response object says ("store": false). What can only be
// served from stored state is refused by name: previous_response_id, conversation, background, prompt (a stored
// template). The rest maps onto the chat path: input -> messages (parse_response_input.cpp), max_output_tokens ->
// max_tokens, function tools and tool_choice -> chat's, text.format -> structured output.
#include <algorithm>

#include "core/format.h"
#include "grammar/json_schema.h"
#include "server/openai/json_fields.h"
#include "server/openai/parse_request.h"

namespace kairo::server {

using json = nlohmann::ordered_json;
using namespace json_fields;

namespace {

std::optional<ApiError> reject_stateful(const json& body) {
  if (present(body, "previous_response_id")) {
    return invalid_param("previous_response_id",
                         "'previous_response_id' cannot be resolved: kairo's /v1/responses is stateless and stores no "
                         "responses; send the whole conversation in 'input' (earlier output items included)");
  }
  if (present(body, "conversation")) {
    return invalid_param("conversation", "'conversation' is not supported: kairo's /v1/responses is stateless and "
                                         "stores no conversations; send the whole conversation in 'input'");
  }
  bool background = false;
  KAIRO_API_TRY(get_bool(body, "background", "background", background));
  if (background) {
    return invalid_param("background", "'background': true is not supported: a background response is fetched "
                                       "later, and kairo's /v1/responses is stateless; stream it instead");
  }
  if (present(body, "prompt")) {
    return invalid_param("prompt", "'prompt' (a stored prompt template) is not supported: send its text in "
                                   "'instructions' and 'input'");
  }
  bool store = false;
  KAIRO_API_TRY(get_bool(body, "store", "store", store));  // either way nothing is stored
  int64_t top_logprobs = 0;
  KAIRO_API_TRY(get_int(body, "top_logprobs", "top_logprobs", 0, 20, top_logprobs));
  if (top_logprobs > 0) {
    return invalid_param("top_logprobs", "'top_logprobs' is not supported on /v1/responses; "
                                         "/v1/chat/completions returns logprobs");
  }
  return std::nullopt;
}

// tools [{"type": "function", name, description, parameters, strict}] in chat's shape. Hosted tools (web_search,
// file_search, code_interpreter, ...) run on OpenAI's side.
std::optional<ApiError> translate_tools(const json& body, json& tools) {
  auto it = body.find("tools");
  if (it == body.end() || it->is_null()) return std::nullopt;
  if (!it->is_array()) return invalid_param("tools", strprintf("'tools' must be an array, got %s", kind_of(*it)));
  if (it->empty()) return std::nullopt;
  tools = json::array();
  for (size_t i = 0; i < it->size(); ++i) {
    const json& tool = (*it)[i];
    const std::string tp = strprintf("tools[%zu]", i);
    if (!tool.is_object()) return invalid_param(tp, strprintf("'%s' must be an object", tp.c_str()));
    const json type = tool.value("type", json());
    if (type != "function") {
      return invalid_param(tp + ".type", strprintf("'%s' is a %s tool; kairo runs function tools only (the others "
                                                   "run on OpenAI's side)",
                                                   tp.c_str(), preview(type).c_str()));
    }
    auto name = tool.find("name");
    if (name == tool.end() || !name->is_string()) {
      return invalid_param(tp + ".name", strprintf("'%s.name' must be a string", tp.c_str()));
    }
    json function = {{"name", *name}};
    if (auto d = tool.find("description"); d != tool.end() && !d->is_null()) function["description"] = *d;
    if (auto p = tool.find("parameters"); p != tool.end() && !p->is_null()) {
      if (!p->is_object()) {
        return invalid_param(tp + ".parameters", strprintf("'%s.parameters' must be a JSON schema object", tp.c_str()));
      }
      function["parameters"] = *p;
    }
    tools.push_back({{"type", "function"}, {"function", std::move(function)}});
  }
  return std::nullopt;
}

// tool_choice "auto" | "none" | "required" | {"type": "function", "name": ...} in chat's shape.
std::optional<ApiError> translate_tool_choice(const json& body, const json& tools, json& chat) {
  auto it = body.find("tool_choice");
  if (it == body.end() || it->is_null()) return std::nullopt;
  if (it->is_string()) {
    chat["tool_choice"] = *it;  // checked by parse_chat_messages
    return std::nullopt;
  }
  if (!it->is_object() || it->value("type", json()) != "function" || !it->contains("name") ||
      !(*it)["name"].is_string()) {
    return invalid_param("tool_choice", "'tool_choice' must be \"none\", \"auto\", \"required\" or "
                                        "{\"type\": \"function\", \"name\": ...}");
  }
  const json& name = (*it)["name"];
  const bool known = tools.is_array() && std::any_of(tools.begin(), tools.end(), [&](const json& t) {
                       return t["function"]["name"] == name;
                     });
  if (!known) {
    return invalid_param("tool_choice.name", strprintf("'tool_choice' names the function %s, which is not in 'tools'",
                                                       preview(name).c_str()));
  }
  chat["tool_choice"] = {{"type", "function"}, {"function", {{"name", name}}}};
  return std::nullopt;
}

// text.format {"type": "text" | "json_object" | "json_schema" (name, schema, strict)} as an output grammar.
std::optional<ApiError> parse_text_format(const json& body, GenerationParams& out) {
  auto text = body.find("text");
  if (text == body.end() || text->is_null()) return std::nullopt;
  if (!text->is_object()) return invalid_param("text", strprintf("'text' must be an object, got %s", kind_of(*text)));
  auto format = text->find("format");
  if (format == text->end() || format->is_null()) return std::nullopt;
  const char* shape = "'text.format' must be {\"type\": \"text\"}, {\"type\": \"json_object\"} or {\"type\": "
                      "\"json_schema\", \"name\": ..., \"schema\": {...}}";
  if (!format->is_object() || !format->contains("type") || !(*format)["type"].is_string()) {
    return invalid_param("text.format", shape);
  }
  const std::string type = (*format)["type"];
  if (type == "text") return std::nullopt;
  if (type == "json_object") {
    out.grammar = grammar::json_object_gbnf();
  } else if (type == "json_schema") {
    auto schema = format->find("schema");
    if (schema == format->end() || schema->is_null()) {
      return invalid_param("text.format.schema", "'text.format.schema' is required");
    }
    bool strict = true;  // kairo's grammars are always strict
    KAIRO_API_TRY(get_bool(*format, "strict", "text.format.strict", strict));
    auto gbnf = schema_grammar(*schema, "text.format.schema");
    if (!gbnf.ok()) return gbnf.error();
    out.grammar = std::move(*gbnf);
  } else {
    return invalid_param("text.format.type", shape);
  }
  out.grammar_param = "text.format";
  return std::nullopt;
}

// A field's value for the Response object: as given, else OpenAI's default.
json given_or(const json& body, const char* key, json fallback) {
  auto it = body.find(key);
  return it == body.end() || it->is_null() ? fallback : *it;
}

}  // namespace

ApiResult<ResponsesRequest> parse_responses_request(const json& body, const ParseContext& ctx) {
  ResponsesRequest req;
  if (auto e = reject_stateful(body)) return *e;
  // The sampling fields that share chat's names; only these, so a chat-only field (n, logprobs) is not honoured here.
  json sampling = json::object();
  for (const char* key : {"model", "temperature", "top_p", "stream", "user"}) {
    if (auto it = body.find(key); it != body.end()) sampling[key] = *it;
  }
  if (auto e = parse_generation_params(sampling, ctx, /*is_chat=*/true, req.chat.params)) return *e;
  req.chat.params.max_tokens_field = "max_output_tokens";
  if (auto e = parse_max_tokens(body, "max_output_tokens", ctx, req.chat.params)) return *e;
  if (auto e = parse_text_format(body, req.chat.params)) return *e;
  if (auto m = body.find("metadata"); m != body.end() && !m->is_null() && !m->is_object()) {
    return invalid_param("metadata", strprintf("'metadata' must be an object, got %s", kind_of(*m)));
  }
  json chat = json::object();
  if (auto e = translate_response_input(body, ctx, chat["messages"])) return *e;
  json tools;
  if (auto e = translate_tools(body, tools)) return *e;
  if (!tools.is_null()) chat["tools"] = tools;
  if (auto e = translate_tool_choice(body, tools, chat)) return *e;
  if (auto it = body.find("parallel_tool_calls"); it != body.end()) chat["parallel_tool_calls"] = *it;
  if (auto e = parse_chat_messages(chat, ctx, req.chat)) return *e;

  req.echo = {{"instructions", given_or(body, "instructions", nullptr)},
              {"max_output_tokens", given_or(body, "max_output_tokens", nullptr)},
              {"metadata", given_or(body, "metadata", json::object())},
              {"parallel_tool_calls", req.chat.parallel_tool_calls},
              {"temperature", given_or(body, "temperature", 1.0)},
              {"text", given_or(body, "text", json{{"format", {{"type", "text"}}}})},
              {"tool_choice", given_or(body, "tool_choice", "auto")},
              {"tools", given_or(body, "tools", json::array())},
              {"top_p", given_or(body, "top_p", 1.0)},
              {"user", given_or(body, "user", nullptr)}};
  return req;
}

}  // namespace kairo::server
