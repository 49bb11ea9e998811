// Anthropic's system prompt and messages (content as a string or an array of content blocks) as OpenAI chat
// messages. A user turn may hold several tool results and text: each tool_result becomes a "tool" message and runs
// of text a "user" message, in the order given, since chat templates expect a tool's result right after the call.
#include <map>

#include "core/format.h"
#include "server/anthropic/parse_messages.h"
#include "server/openai/json_fields.h"

namespace kairo::server {

using json = nlohmann::ordered_json;
using namespace json_fields;

namespace {

std::optional<ApiError> block_type(const json& block, const std::string& param, std::string& type) {
  if (!block.is_object()) {
    return invalid_param(param, strprintf("'%s' must be a content block (an object), got %s", param.c_str(),
                                          kind_of(block)));
  }
  auto it = block.find("type");
  if (it == block.end() || !it->is_string()) {
    return invalid_param(param + ".type", strprintf("'%s.type' must be a string", param.c_str()));
  }
  type = it->get<std::string>();
  return std::nullopt;
}

ApiError unsupported_block(const std::string& param, const std::string& type, const char* allowed) {
  return invalid_param(param + ".type", strprintf("'%s' is a %s block; kairo serves text models and takes %s",
                                                  param.c_str(), quote_for_error(type, 40).c_str(), allowed));
}

// A string, or an array of text blocks joined with newlines (system prompts, tool results).
std::optional<ApiError> text_of(const json& content, const std::string& param, std::string& out) {
  if (content.is_string()) {
    out = content.get<std::string>();
    return std::nullopt;
  }
  if (!content.is_array()) {
    return invalid_param(param, strprintf("'%s' must be a string or an array of text blocks, got %s", param.c_str(),
                                          kind_of(content)));
  }
  for (size_t j = 0; j < content.size(); ++j) {
    const std::string bp = strprintf("%s[%zu]", param.c_str(), j);
    std::string type, text;
    KAIRO_API_TRY(block_type(content[j], bp, type));
    if (type != "text") return unsupported_block(bp, type, "text blocks here");
    KAIRO_API_TRY(required_string(content[j], "text", bp + ".text", text));
    if (j > 0) out += "\n";
    out += text;
  }
  return std::nullopt;
}

// Tool names by tool_use id, so a tool message can name its tool (some templates print it).
using ToolNames = std::map<std::string, std::string>;

std::optional<ApiError> assistant_turn(const json& content, const std::string& param, ToolNames& names, json& out) {
  json message = {{"role", "assistant"}};
  if (content.is_string()) {
    message["content"] = content;
    out.push_back(std::move(message));
    return std::nullopt;
  }
  std::string text;
  bool has_text = false;
  json calls = json::array();
  for (size_t j = 0; j < content.size(); ++j) {
    const std::string bp = strprintf("%s[%zu]", param.c_str(), j);
    std::string type;
    KAIRO_API_TRY(block_type(content[j], bp, type));
    const json& block = content[j];
    if (type == "text") {
      std::string piece;
      KAIRO_API_TRY(required_string(block, "text", bp + ".text", piece));
      if (has_text) text += "\n";
      text += piece;
      has_text = true;
    } else if (type == "tool_use") {
      std::string id, name;
      KAIRO_API_TRY(required_string(block, "id", bp + ".id", id));
      KAIRO_API_TRY(required_string(block, "name", bp + ".name", name));
      auto input = block.find("input");
      if (input == block.end() || !input->is_object()) {
        return invalid_param(bp + ".input", strprintf("'%s.input' must be an object", bp.c_str()));
      }
      names[id] = name;
      calls.push_back({{"id", id}, {"type", "function"}, {"function", {{"name", name}, {"arguments", *input}}}});
    } else if (type == "thinking" || type == "redacted_thinking") {
      continue;  // earlier turns' thinking: chat templates leave it out of the prompt, and so does kairo
    } else {
      return unsupported_block(bp, type, "text, tool_use and thinking blocks in assistant turns");
    }
  }
  // An assistant turn of calls alone has null content, as chat templates expect (parse_chat_messages).
  message["content"] = has_text || calls.empty() ? json(text) : json(nullptr);
  if (!calls.empty()) message["tool_calls"] = std::move(calls);
  out.push_back(std::move(message));
  return std::nullopt;
}

std::optional<ApiError> user_turn(const json& content, const std::string& param, const ToolNames& names, json& out) {
  if (content.is_string()) {
    out.push_back({{"role", "user"}, {"content", content}});
    return std::nullopt;
  }
  std::string text;
  bool has_text = false;
  auto flush_text = [&] {
    if (has_text) out.push_back({{"role", "user"}, {"content", text}});
    text.clear();
    has_text = false;
  };
  const size_t n_before = out.size();
  for (size_t j = 0; j < content.size(); ++j) {
    const std::string bp = strprintf("%s[%zu]", param.c_str(), j);
    std::string type;
    KAIRO_API_TRY(block_type(content[j], bp, type));
    const json& block = content[j];
    if (type == "text") {
      std::string piece;
      KAIRO_API_TRY(required_string(block, "text", bp + ".text", piece));
      if (has_text) text += "\n";
      text += piece;
      has_text = true;
    } else if (type == "tool_result") {
      flush_text();
      std::string id, result;
      KAIRO_API_TRY(required_string(block, "tool_use_id", bp + ".tool_use_id", id));
      if (auto c = block.find("content"); c != block.end() && !c->is_null()) {
        KAIRO_API_TRY(text_of(*c, bp + ".content", result));
      }
      json message = {{"role", "tool"}, {"tool_call_id", id}, {"content", result}};
      if (auto name = names.find(id); name != names.end()) message["name"] = name->second;
      out.push_back(std::move(message));
    } else {
      return unsupported_block(bp, type, "text and tool_result blocks in user turns");
    }
  }
  flush_text();
  if (out.size() == n_before) out.push_back({{"role", "user"}, {"content", ""}});  // an empty array
  return std::nullopt;
}

}  // namespace

std::optional<ApiError> translate_conversation(const json& body, const ParseContext& ctx, json& messages,
                                               bool& ends_with_assistant) {
  messages = json::array();
  if (auto system = body.find("system"); system != body.end() && !system->is_null()) {
    std::string text;
    KAIRO_API_TRY(text_of(*system, "system", text));
    if (!text.empty()) messages.push_back({{"role", "system"}, {"content", text}});
  }
  auto it = body.find("messages");
  if (it == body.end() || it->is_null()) {
    return invalid_param("messages", "'messages' (an array of user and assistant turns) is required");
  }
  if (!it->is_array()) return invalid_param("messages", strprintf("'messages' must be an array, got %s", kind_of(*it)));
  if (it->empty()) return invalid_param("messages", "'messages' must hold at least one message");
  if (it->size() > static_cast<size_t>(ctx.limits.max_messages)) {
    return invalid_param("messages", strprintf("%zu messages were given; at most %d are accepted (the server's "
                                               "--max-messages)",
                                               it->size(), ctx.limits.max_messages));
  }
  ToolNames names;
  for (size_t i = 0; i < it->size(); ++i) {
    const json& msg = (*it)[i];
    const std::string mp = strprintf("messages[%zu]", i);
    if (!msg.is_object()) {
      return invalid_param(mp, strprintf("'%s' must be an object, got %s", mp.c_str(), kind_of(msg)));
    }
    std::string role;
    KAIRO_API_TRY(required_string(msg, "role", mp + ".role", role));
    auto content = msg.find("content");
    if (content == msg.end() || !(content->is_string() || content->is_array())) {
      return invalid_param(mp + ".content", strprintf("'%s.content' must be a string or an array of content blocks",
                                                      mp.c_str()));
    }
    if (role == "user") {
      KAIRO_API_TRY(user_turn(*content, mp + ".content", names, messages));
    } else if (role == "assistant") {
      KAIRO_API_TRY(assistant_turn(*content, mp + ".content", names, messages));
    } else {
      return invalid_param(mp + ".role", strprintf("'%s.role' is %s; messages are \"user\" or \"assistant\" turns "
                                                   "(the system prompt goes in the top-level 'system')",
                                                   mp.c_str(), quote_for_error(role, 32).c_str()));
    }
  }
  ends_with_assistant = it->back().value("role", "") == "assistant";
  return std::nullopt;
}

}  // namespace kairo::server
