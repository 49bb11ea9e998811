// The Responses API's `instructions` and `input` as chat messages. Input is a string (one user message) or a list of
// items: messages (role + content as a string or input_text / output_text parts), function_call items (the
// assistant's calls, joined onto the assistant turn before them) and function_call_output items (tool messages).
// A client replays a response's output items as the next request's input, so reasoning items are accepted and
// dropped, as chat templates drop earlier turns' thinking. Item references need stored items: refused.
#include "core/format.h"
#include "server/openai/json_fields.h"
#include "server/openai/parse_request.h"

namespace kairo::server {

using json = nlohmann::ordered_json;
using namespace json_fields;

namespace {

// A string, or text parts (input_text, output_text, refusal) joined with newlines.
std::optional<ApiError> content_text(const json& content, const std::string& param, std::string& out) {
  return joined_text_parts(content, param, [](const json& part, const std::string& pp, const std::string& type,
                                              std::string& text) -> std::optional<ApiError> {
    if (type == "input_text" || type == "output_text") return required_string(part, "text", pp + ".text", text);
    if (type == "refusal") return required_string(part, "refusal", pp + ".refusal", text);
    return invalid_param(pp + ".type", strprintf("'%s' is an %s part; kairo serves text models and takes "
                                                 "input_text and output_text parts",
                                                 pp.c_str(), quote_for_error(type, 40).c_str()));
  }, out);
}

std::optional<ApiError> message_item(const json& item, const std::string& ip, json& messages) {
  std::string role, text;
  KAIRO_API_TRY(required_string(item, "role", ip + ".role", role));
  if (role != "user" && role != "assistant" && role != "system" && role != "developer") {
    return invalid_param(ip + ".role", strprintf("'%s.role' is %s; expected user, assistant, system or developer",
                                                 ip.c_str(), quote_for_error(role, 32).c_str()));
  }
  auto content = item.find("content");
  if (content == item.end() || content->is_null()) {
    return invalid_param(ip + ".content", strprintf("'%s.content' is required", ip.c_str()));
  }
  KAIRO_API_TRY(content_text(*content, ip + ".content", text));
  messages.push_back({{"role", role}, {"content", text}});
  return std::nullopt;
}

// The call joins the assistant turn just before it (a reply's text and its calls are one turn), or opens one.
std::optional<ApiError> function_call_item(const json& item, const std::string& ip, json& messages) {
  std::string call_id, name, arguments;
  KAIRO_API_TRY(required_string(item, "call_id", ip + ".call_id", call_id));
  KAIRO_API_TRY(required_string(item, "name", ip + ".name", name));
  KAIRO_API_TRY(required_string(item, "arguments", ip + ".arguments", arguments));
  json call = {{"id", call_id}, {"type", "function"}, {"function", {{"name", name}, {"arguments", arguments}}}};
  if (messages.empty() || messages.back()["role"] != "assistant") {
    messages.push_back({{"role", "assistant"}, {"content", nullptr}});
  }
  json& turn = messages.back();
  if (!turn.contains("tool_calls")) turn["tool_calls"] = json::array();
  turn["tool_calls"].push_back(std::move(call));
  return std::nullopt;
}

std::optional<ApiError> function_call_output_item(const json& item, const std::string& ip, json& messages) {
  std::string call_id, output;
  KAIRO_API_TRY(required_string(item, "call_id", ip + ".call_id", call_id));
  auto it = item.find("output");
  if (it == item.end() || it->is_null()) {
    return invalid_param(ip + ".output", strprintf("'%s.output' is required", ip.c_str()));
  }
  KAIRO_API_TRY(content_text(*it, ip + ".output", output));
  json message = {{"role", "tool"}, {"tool_call_id", call_id}, {"content", output}};
  // The tool's name, from the call it answers, for templates that print it.
  for (auto m = messages.rbegin(); m != messages.rend(); ++m) {
    if (!m->contains("tool_calls")) continue;
    for (const json& call : (*m)["tool_calls"]) {
      if (call["id"] == call_id) message["name"] = call["function"]["name"];
    }
    if (message.contains("name")) break;
  }
  messages.push_back(std::move(message));
  return std::nullopt;
}

}  // namespace

std::optional<ApiError> translate_response_input(const json& body, const ParseContext& ctx, json& messages) {
  messages = json::array();
  std::string instructions;
  KAIRO_API_TRY(get_string(body, "instructions", "instructions", ctx.limits.max_body_bytes, instructions));
  if (!instructions.empty()) messages.push_back({{"role", "system"}, {"content", instructions}});
  auto input = body.find("input");
  if (input == body.end() || input->is_null()) {
    return invalid_param("input", "'input' (a string, or an array of input items) is required");
  }
  if (input->is_string()) {
    messages.push_back({{"role", "user"}, {"content", *input}});
    return std::nullopt;
  }
  if (!input->is_array()) {
    return invalid_param("input", strprintf("'input' must be a string or an array of input items, got %s",
                                            kind_of(*input)));
  }
  if (input->empty()) return invalid_param("input", "'input' must hold at least one item");
  if (input->size() > static_cast<size_t>(ctx.limits.max_messages)) {
    return invalid_param("input", strprintf("%zu input items were given; at most %d are accepted (the server's "
                                            "--max-messages)",
                                            input->size(), ctx.limits.max_messages));
  }
  for (size_t i = 0; i < input->size(); ++i) {
    const json& item = (*input)[i];
    const std::string ip = strprintf("input[%zu]", i);
    if (!item.is_object()) {
      return invalid_param(ip, strprintf("'%s' must be an object, got %s", ip.c_str(), kind_of(item)));
    }
    // A message may leave out its type (the "easy input message" shape).
    std::string type = "message";
    if (auto t = item.find("type"); t != item.end() && !t->is_null()) {
      KAIRO_API_TRY(required_string(item, "type", ip + ".type", type));
    }
    if (type == "message") {
      KAIRO_API_TRY(message_item(item, ip, messages));
    } else if (type == "function_call") {
      KAIRO_API_TRY(function_call_item(item, ip, messages));
    } else if (type == "function_call_output") {
      KAIRO_API_TRY(function_call_output_item(item, ip, messages));
    } else if (type == "reasoning") {
      continue;  // an earlier turn's thinking, replayed: left out of the prompt, as chat templates do
    } else if (type == "item_reference") {
      return invalid_param(ip + ".type", strprintf("'%s' refers to a stored item; kairo's /v1/responses is stateless "
                                                   "and stores none: send the item itself",
                                                   ip.c_str()));
    } else {
      return invalid_param(ip + ".type", strprintf("'%s' is a %s item; kairo takes message, function_call, "
                                                   "function_call_output and reasoning items",
                                                   ip.c_str(), quote_for_error(type, 40).c_str()));
    }
  }
  if (messages.size() == (instructions.empty() ? 0u : 1u)) {
    return invalid_param("input", "'input' holds no message to answer, only reasoning items");
  }
  return std::nullopt;
}

}  // namespace kairo::server
