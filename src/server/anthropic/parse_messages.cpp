// The top level of an Anthropic Messages request: sampling fields (the same names as OpenAI's, read by
// parse_generation_params), stop_sequences, thinking, tools and tool_choice; the conversation is
// parse_content_blocks.cpp's. Everything is then validated once more, as a chat request, by parse_chat_messages.
#include <algorithm>

#include "core/format.h"
#include "server/anthropic/parse_messages.h"
#include "server/openai/json_fields.h"

namespace kairo::server {

using json = nlohmann::ordered_json;
using namespace json_fields;

namespace {

// Fields of Anthropic's API that need what kairo does not have; refused rather than silently dropped.
std::optional<ApiError> reject_unsupported(const json& body) {
  if (present(body, "mcp_servers")) {
    return invalid_param("mcp_servers", "'mcp_servers' is not supported: kairo calls no tools itself; declare client "
                                        "tools in 'tools' and run them yourself");
  }
  if (present(body, "container")) {
    return invalid_param("container", "'container' is not supported: kairo runs no code execution containers");
  }
  return std::nullopt;
}

// Anthropic's sampling fields share OpenAI's names: only these are read, so an OpenAI-only field sent here (n,
// logprobs, response_format) is not quietly honoured either.
std::optional<ApiError> parse_sampling(const json& body, const ParseContext& ctx, MessagesUse use,
                                       GenerationParams& out) {
  json sampling = json::object();
  const char* keys[] = {"model", "max_tokens", "temperature", "top_p", "top_k", "stream"};
  for (const char* key : keys) {
    if (auto it = body.find(key); it != body.end()) sampling[key] = *it;
  }
  if (use == MessagesUse::CountTokens) {
    sampling = json{{"model", body.value("model", json())}};
  } else if (!present(body, "max_tokens")) {
    return invalid_param("max_tokens", "'max_tokens' is required: the most tokens the reply may have");
  }
  KAIRO_API_TRY(parse_generation_params(sampling, ctx, /*is_chat=*/true, out));
  if (auto it = body.find("stop_sequences"); it != body.end() && !it->is_null() && use == MessagesUse::Generate) {
    if (!it->is_array()) {
      return invalid_param("stop_sequences", strprintf("'stop_sequences' must be an array of strings, got %s",
                                                       kind_of(*it)));
    }
    KAIRO_API_TRY(parse_stop_strings(*it, "stop_sequences", ctx, out.stop));
  }
  if (auto it = body.find("metadata"); it != body.end() && !it->is_null()) {
    if (!it->is_object()) {
      return invalid_param("metadata", strprintf("'metadata' must be an object, got %s", kind_of(*it)));
    }
    KAIRO_API_TRY(get_string(*it, "user_id", "metadata.user_id", 256, out.user));
  }
  return std::nullopt;
}

// thinking {"type": "enabled", "budget_tokens": n} / {"type": "adaptive"} / {"type": "disabled"}: whether the
// template opens the model's thinking (the enable_thinking switch Qwen3's and its kin's templates read). The budget
// is checked, not enforced: thinking counts against max_tokens like the rest of the reply.
std::optional<ApiError> parse_thinking(const json& body, json& template_kwargs) {
  auto it = body.find("thinking");
  if (it == body.end() || it->is_null()) return std::nullopt;
  const char* shape = "'thinking' must be {\"type\": \"enabled\", \"budget_tokens\": n}, {\"type\": \"adaptive\"} "
                      "or {\"type\": \"disabled\"}";
  if (!it->is_object() || !it->contains("type") || !(*it)["type"].is_string()) return invalid_param("thinking", shape);
  const std::string type = (*it)["type"];
  if (type == "enabled") {
    if (!present(*it, "budget_tokens")) {
      return invalid_param("thinking.budget_tokens", "'thinking.budget_tokens' is required when thinking is enabled");
    }
    int64_t budget = 0;
    KAIRO_API_TRY(get_int(*it, "budget_tokens", "thinking.budget_tokens", 1, 1 << 30, budget));
  } else if (type != "adaptive" && type != "disabled") {
    return invalid_param("thinking.type", shape);
  }
  template_kwargs["enable_thinking"] = type != "disabled";
  return std::nullopt;
}

// tools [{name, description, input_schema}] as OpenAI function tools. A typed tool other than "custom" is one of
// Anthropic's server tools (web search, code execution, ...), which run on Anthropic's side.
std::optional<ApiError> translate_tools(const json& body, const ParseContext& ctx, json& tools) {
  auto it = body.find("tools");
  if (it == body.end() || it->is_null()) return std::nullopt;
  if (!it->is_array()) return invalid_param("tools", strprintf("'tools' must be an array, got %s", kind_of(*it)));
  if (it->size() > static_cast<size_t>(ctx.limits.max_tools)) {
    return invalid_param("tools", strprintf("%zu tools were given; at most %d are accepted (the server's --max-tools)",
                                            it->size(), ctx.limits.max_tools));
  }
  tools = json::array();
  for (size_t i = 0; i < it->size(); ++i) {
    const json& tool = (*it)[i];
    const std::string tp = strprintf("tools[%zu]", i);
    if (!tool.is_object()) return invalid_param(tp, strprintf("'%s' must be an object", tp.c_str()));
    if (auto type = tool.find("type"); type != tool.end() && !type->is_null() && *type != "custom") {
      return invalid_param(tp + ".type", strprintf("'%s' is the server tool %s, which runs on Anthropic's side; kairo "
                                                   "takes client tools (name, description, input_schema)",
                                                   tp.c_str(), preview(*type).c_str()));
    }
    auto name = tool.find("name");
    if (name == tool.end() || !name->is_string()) {
      return invalid_param(tp + ".name", strprintf("'%s.name' must be a string", tp.c_str()));
    }
    auto schema = tool.find("input_schema");
    if (schema == tool.end() || !schema->is_object()) {
      return invalid_param(tp + ".input_schema", strprintf("'%s.input_schema' must be a JSON schema object",
                                                           tp.c_str()));
    }
    json function = {{"name", *name}};
    if (auto d = tool.find("description"); d != tool.end() && !d->is_null()) {
      if (!d->is_string()) {
        return invalid_param(tp + ".description", strprintf("'%s.description' must be a string", tp.c_str()));
      }
      function["description"] = *d;
    }
    function["parameters"] = *schema;
    tools.push_back({{"type", "function"}, {"function", std::move(function)}});
  }
  return std::nullopt;
}

// tool_choice {"type": "auto" | "any" | "tool" (+ "name") | "none", "disable_parallel_tool_use"} in OpenAI's terms.
std::optional<ApiError> translate_tool_choice(const json& body, const json& tools, json& chat) {
  auto it = body.find("tool_choice");
  if (it == body.end() || it->is_null()) return std::nullopt;
  const char* shape = "'tool_choice' must be {\"type\": \"auto\"}, {\"type\": \"any\"}, {\"type\": \"tool\", "
                      "\"name\": ...} or {\"type\": \"none\"}";
  if (!it->is_object() || !it->contains("type") || !(*it)["type"].is_string()) {
    return invalid_param("tool_choice", shape);
  }
  const std::string type = (*it)["type"];
  bool disable_parallel = false;
  KAIRO_API_TRY(get_bool(*it, "disable_parallel_tool_use", "tool_choice.disable_parallel_tool_use", disable_parallel));
  if (disable_parallel) chat["parallel_tool_calls"] = false;
  if (type == "auto" || type == "none") {
    chat["tool_choice"] = type;
    return std::nullopt;
  }
  if (type != "any" && type != "tool") return invalid_param("tool_choice.type", shape);
  if (tools.is_null()) {
    return invalid_param("tool_choice", strprintf("'tool_choice' {\"type\": \"%s\"} needs 'tools'", type.c_str()));
  }
  if (type == "any") {
    chat["tool_choice"] = "required";
    return std::nullopt;
  }
  auto name = it->find("name");
  if (name == it->end() || !name->is_string()) {
    return invalid_param("tool_choice.name", "'tool_choice.name' (the tool to call) must be a string");
  }
  const bool known =
      std::any_of(tools.begin(), tools.end(), [&](const json& t) { return t["function"]["name"] == *name; });
  if (!known) {
    return invalid_param("tool_choice.name", strprintf("'tool_choice' names the tool %s, which is not in 'tools'",
                                                       preview(*name).c_str()));
  }
  chat["tool_choice"] = {{"type", "function"}, {"function", {{"name", *name}}}};
  return std::nullopt;
}

}  // namespace

ApiResult<ChatRequest> parse_messages_request(const json& body, const ParseContext& ctx, MessagesUse use) {
  ChatRequest req;
  if (auto e = reject_unsupported(body)) return *e;
  if (auto e = parse_sampling(body, ctx, use, req.params)) return *e;
  // The conversation and tools in OpenAI's chat shape, which parse_chat_messages validates and normalises.
  json chat = json::object();
  bool prefill = false;
  if (auto e = translate_conversation(body, ctx, chat["messages"], prefill)) return *e;
  json tools;
  if (auto e = translate_tools(body, ctx, tools)) return *e;
  if (!tools.is_null()) chat["tools"] = tools;
  if (auto e = translate_tool_choice(body, tools, chat)) return *e;
  json kwargs = json::object();
  if (auto e = parse_thinking(body, kwargs)) return *e;
  chat["chat_template_kwargs"] = std::move(kwargs);
  if (prefill) {
    // A final assistant turn is the start of the reply, which the model continues (Anthropic's "prefill").
    if (chat["messages"].back().contains("tool_calls")) {
      return invalid_param("messages", "the last message is an assistant turn with tool_use blocks: send their "
                                       "results in a user turn of tool_result blocks");
    }
    chat["continue_final_message"] = true;
  }
  if (auto e = parse_chat_messages(chat, ctx, req)) return *e;
  return req;
}

}  // namespace kairo::server
