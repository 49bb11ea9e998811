#pragma once
// Anthropic Messages request JSON -> the ChatRequest the chat path serves. The request is translated into the
// OpenAI chat shape kairo already validates and renders (parse_chat_messages): system -> a system message,
// text blocks -> content, tool_use blocks -> an assistant turn's tool_calls, tool_result blocks -> tool messages,
// tools {name, description, input_schema} -> function tools, tool_choice auto / any / tool / none -> "auto" /
// "required" / the named function / "none", a final assistant turn -> a prefill the reply continues, thinking ->
// the template's enable_thinking. What kairo cannot honour (images, documents, server tools, MCP servers) is refused
// by name, never ignored. Errors name the Anthropic field ("messages[1].content[0].type").
#include <nlohmann/json.hpp>

#include "server/api_error.h"
#include "server/openai/parse_request.h"
#include "server/openai/request_types.h"

namespace kairo::server {

enum class MessagesUse {
  Generate,     // POST /v1/messages: max_tokens is required
  CountTokens,  // POST /v1/messages/count_tokens: only what shapes the prompt is read
};

ApiResult<ChatRequest> parse_messages_request(const nlohmann::ordered_json& body, const ParseContext& ctx,
                                              MessagesUse use = MessagesUse::Generate);

// The conversation (parse_content_blocks.cpp): `system` and `messages` as OpenAI chat messages, in order, for
// parse_chat_messages. Sets `ends_with_assistant` when the last message is an assistant turn (a prefill).
std::optional<ApiError> translate_conversation(const nlohmann::ordered_json& body, const ParseContext& ctx,
                                               nlohmann::ordered_json& messages, bool& ends_with_assistant);

}  // namespace kairo::server
