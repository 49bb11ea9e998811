// Chat messages and tools: validated, then normalised into the shape chat templates expect (string content,
// tool-call arguments as objects).
#include <algorithm>

#include "core/format.h"
#include "server/openai/json_fields.h"
#include "server/openai/parse_request.h"

namespace kairo::server {

using json = nlohmann::ordered_json;
using namespace json_fields;

namespace {

constexpr const char* kRoles[] = {"system", "developer", "user", "assistant", "tool"};

bool known_role(const std::string& role) {
  for (const char* r : kRoles) {
    if (role == r) return true;
  }
  return false;
}

// Content as one string: a string as is, "text" parts joined with newlines.
std::optional<ApiError> flatten_content(const json& content, const std::string& param, std::string& out) {
  return joined_text_parts(content, param, [](const json& part, const std::string& pp, const std::string& type,
                                              std::string& text) -> std::optional<ApiError> {
    if (type != "text") {
      return invalid_param(pp + ".type", strprintf("'%s' has type %s; only \"text\" content parts are supported",
                                                   pp.c_str(), preview(json(type)).c_str()));
    }
    return required_string(part, "text", pp + ".text", text);
  }, out);
}

std::optional<ApiError> check_tool_calls(const json& calls, const std::string& param, int max_depth,
                                         json& normalised) {
  if (!calls.is_array()) {
    return invalid_param(param, strprintf("'%s' must be an array, got %s", param.c_str(), kind_of(calls)));
  }
  normalised = json::array();
  for (size_t k = 0; k < calls.size(); ++k) {
    const std::string cp = strprintf("%s[%zu]", param.c_str(), k);
    const json& call = calls[k];
    if (!call.is_object()) return invalid_param(cp, strprintf("'%s' must be an object", cp.c_str()));
    auto fn = call.find("function");
    if (fn == call.end() || !fn->is_object()) {
      return invalid_param(cp + ".function", strprintf("'%s.function' must be an object", cp.c_str()));
    }
    auto name = fn->find("name");
    if (name == fn->end() || !name->is_string()) {
      return invalid_param(cp + ".function.name", strprintf("'%s.function.name' must be a string", cp.c_str()));
    }
    json out_call = call;
    auto args = fn->find("arguments");
    if (args != fn->end() && args->is_string()) {
      // Templates index into the arguments (Hermes, Llama 3.1): hand them the object when the string is JSON (and
      // no deeper than a request body may be).
      const std::string& text = args->get_ref<const std::string&>();
      if (json_nesting_depth(text, max_depth) <= max_depth) {
        json parsed = json::parse(text, nullptr, /*allow_exceptions=*/false);
        if (!parsed.is_discarded() && parsed.is_object()) out_call["function"]["arguments"] = std::move(parsed);
      }
    } else if (args != fn->end() && !args->is_object() && !args->is_null()) {
      return invalid_param(cp + ".function.arguments",
                           strprintf("'%s.function.arguments' must be a string of JSON", cp.c_str()));
    }
    normalised.push_back(std::move(out_call));
  }
  return std::nullopt;
}

std::optional<ApiError> parse_tools(const json& body, const ParseContext& ctx, ChatRequest& out) {
  auto it = body.find("tools");
  if (it == body.end() || it->is_null()) return std::nullopt;
  if (!it->is_array()) return invalid_param("tools", strprintf("'tools' must be an array, got %s", kind_of(*it)));
  if (it->size() > static_cast<size_t>(ctx.limits.max_tools)) {
    return invalid_param("tools", strprintf("%zu tools were given; at most %d are accepted (the server's "
                                            "--max-tools)",
                                            it->size(), ctx.limits.max_tools));
  }
  for (size_t i = 0; i < it->size(); ++i) {
    const json& tool = (*it)[i];
    const std::string tp = strprintf("tools[%zu]", i);
    if (!tool.is_object()) return invalid_param(tp, strprintf("'%s' must be an object", tp.c_str()));
    auto type = tool.find("type");
    if (type == tool.end() || *type != "function") {
      return invalid_param(tp + ".type", strprintf("'%s.type' must be \"function\"", tp.c_str()));
    }
    auto fn = tool.find("function");
    if (fn == tool.end() || !fn->is_object() || !fn->contains("name") || !(*fn)["name"].is_string()) {
      return invalid_param(tp + ".function", strprintf("'%s.function' must be an object with a string 'name'",
                                                       tp.c_str()));
    }
  }
  if (!it->empty()) out.tools = *it;
  return std::nullopt;
}

std::optional<ApiError> parse_tool_choice(const json& body, ChatRequest& out) {
  KAIRO_API_TRY(get_bool(body, "parallel_tool_calls", "parallel_tool_calls", out.parallel_tool_calls));
  auto it = body.find("tool_choice");
  if (it == body.end() || it->is_null()) return std::nullopt;
  if (it->is_string()) {
    const std::string& c = it->get_ref<const std::string&>();
    if (c != "none" && c != "auto" && c != "required") {
      return invalid_param("tool_choice", strprintf("'tool_choice' %s is not one of \"none\", \"auto\", "
                                                    "\"required\" or {\"type\": \"function\", \"function\": "
                                                    "{\"name\": ...}}",
                                                    quote_for_error(c, 40).c_str()));
    }
    out.tool_choice = c;
  } else {
    const bool shaped = it->is_object() && it->value("type", json()) == "function" && it->contains("function") &&
                        (*it)["function"].is_object() && (*it)["function"].contains("name") &&
                        (*it)["function"]["name"].is_string();
    if (!shaped) {
      return invalid_param("tool_choice", "'tool_choice' must be \"none\", \"auto\", \"required\" or "
                                          "{\"type\": \"function\", \"function\": {\"name\": ...}}");
    }
    out.tool_choice = "function";
    out.tool_choice_name = (*it)["function"]["name"].get<std::string>();
  }
  if (out.tool_choice == "none" || out.tool_choice == "auto") return std::nullopt;
  if (out.tools.is_null()) {
    return invalid_param("tool_choice", strprintf("'tool_choice' %s needs 'tools'", out.tool_choice == "required"
                                                                                          ? "\"required\""
                                                                                          : "naming a function"));
  }
  if (out.tool_choice == "function") {
    const bool known = std::any_of(out.tools.begin(), out.tools.end(), [&](const json& t) {
      return t["function"]["name"] == out.tool_choice_name;
    });
    if (!known) {
      return invalid_param("tool_choice.function.name",
                           strprintf("'tool_choice' names the function %s, which is not in 'tools'",
                                     quote_for_error(out.tool_choice_name, 64).c_str()));
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<ApiError> parse_chat_messages(const json& body, const ParseContext& ctx, ChatRequest& out) {
  auto it = body.find("messages");
  if (it == body.end() || it->is_null()) return invalid_param("messages", "'messages' (an array of messages) is required");
  if (!it->is_array()) return invalid_param("messages", strprintf("'messages' must be an array, got %s", kind_of(*it)));
  if (it->empty()) return invalid_param("messages", "'messages' must hold at least one message");
  if (it->size() > static_cast<size_t>(ctx.limits.max_messages)) {
    return invalid_param("messages", strprintf("%zu messages were given; at most %d are accepted (the server's "
                                               "--max-messages)",
                                               it->size(), ctx.limits.max_messages));
  }
  out.messages = json::array();
  for (size_t i = 0; i < it->size(); ++i) {
    const json& msg = (*it)[i];
    const std::string mp = strprintf("messages[%zu]", i);
    if (!msg.is_object()) return invalid_param(mp, strprintf("'%s' must be an object, got %s", mp.c_str(), kind_of(msg)));
    auto role = msg.find("role");
    if (role == msg.end() || !role->is_string()) {
      return invalid_param(mp + ".role", strprintf("'%s.role' must be a string", mp.c_str()));
    }
    const std::string role_s = role->get<std::string>();
    if (!known_role(role_s)) {
      return invalid_param(mp + ".role", strprintf("'%s.role' is %s; expected one of system, developer, user, "
                                                   "assistant, tool",
                                                   mp.c_str(), quote_for_error(role_s, 32).c_str()));
    }
    json norm = json::object();
    norm["role"] = role_s;
    std::string content;
    auto c = msg.find("content");
    const bool has_tool_calls = msg.contains("tool_calls") && !msg["tool_calls"].is_null();
    if (c == msg.end() || c->is_null()) {
      if (!(role_s == "assistant" && has_tool_calls)) {
        return invalid_param(mp + ".content", strprintf("'%s.content' is required", mp.c_str()));
      }
    } else if (auto e = flatten_content(*c, mp + ".content", content)) {
      return e;
    }
    // An assistant turn of calls alone keeps a null content, as Hugging Face hands it to templates: some test
    // `content is none` to render the calls (DeepSeek-R1's).
    if (c == msg.end() || c->is_null()) norm["content"] = nullptr;
    else norm["content"] = content;
    if (has_tool_calls) {
      if (role_s != "assistant") {
        return invalid_param(mp + ".tool_calls", strprintf("'%s.tool_calls' is only allowed on assistant messages",
                                                           mp.c_str()));
      }
      json calls;
      if (auto e = check_tool_calls(msg["tool_calls"], mp + ".tool_calls", ctx.limits.max_json_depth, calls)) {
        return e;
      }
      norm["tool_calls"] = std::move(calls);
    }
    std::string name, tool_call_id;
    KAIRO_API_TRY(get_string(msg, "name", mp + ".name", 256, name));
    if (!name.empty()) norm["name"] = name;
    KAIRO_API_TRY(get_string(msg, "tool_call_id", mp + ".tool_call_id", 256, tool_call_id));
    if (!tool_call_id.empty()) norm["tool_call_id"] = tool_call_id;
    out.messages.push_back(std::move(norm));
  }
  KAIRO_API_TRY(parse_tools(body, ctx, out));
  KAIRO_API_TRY(parse_tool_choice(body, out));
  KAIRO_API_TRY(get_bool(body, "add_generation_prompt", "add_generation_prompt", out.add_generation_prompt));
  KAIRO_API_TRY(get_bool(body, "continue_final_message", "continue_final_message", out.continue_final_message));
  if (out.continue_final_message && out.add_generation_prompt && present(body, "add_generation_prompt")) {
    return invalid_param("continue_final_message",
                         "'continue_final_message' and 'add_generation_prompt' cannot both be true");
  }
  if (out.continue_final_message) out.add_generation_prompt = false;
  if (auto kw = body.find("chat_template_kwargs"); kw != body.end() && !kw->is_null()) {
    if (!kw->is_object()) return invalid_param("chat_template_kwargs", "'chat_template_kwargs' must be an object");
    out.template_kwargs = *kw;
  }
  return std::nullopt;
}

ApiResult<ChatRequest> parse_chat_request(const json& body, const ParseContext& ctx) {
  ChatRequest req;
  if (auto e = parse_generation_params(body, ctx, /*is_chat=*/true, req.params)) return *e;
  if (auto e = parse_chat_messages(body, ctx, req)) return *e;
  return req;
}

}  // namespace kairo::server
