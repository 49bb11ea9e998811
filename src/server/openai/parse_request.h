#pragma once
// OpenAI request JSON -> validated request structs. This is the only place request JSON is read: every field is
// type- and range-checked here, so nothing invalid reaches the engine. Errors name the field (`param`).
#include <string>

#include <nlohmann/json.hpp>

#include "server/api_error.h"
#include "server/openai/request_types.h"
#include "server/server_config.h"

namespace kairo::server {

struct ParseContext {
  const RequestLimits& limits;
  int n_vocab = 0;
};

// The body as a JSON object; rejects empty bodies, bad JSON, nesting deeper than max_depth (checked before parsing,
// so a hostile body cannot recurse deeply) and non-object bodies.
ApiResult<nlohmann::ordered_json> parse_json_body(const std::string& body, int max_depth);

ApiResult<CompletionRequest> parse_completion_request(const nlohmann::ordered_json& body, const ParseContext& ctx);
ApiResult<ChatRequest> parse_chat_request(const nlohmann::ordered_json& body, const ParseContext& ctx);
ApiResult<TokenizeRequest> parse_tokenize_request(const nlohmann::ordered_json& body, const ParseContext& ctx);
ApiResult<DetokenizeRequest> parse_detokenize_request(const nlohmann::ordered_json& body, const ParseContext& ctx);

// Shared by the two generation endpoints (parse_generation.cpp); is_chat selects chat's logprobs/top_logprobs and
// max_completion_tokens.
std::optional<ApiError> parse_generation_params(const nlohmann::ordered_json& body, const ParseContext& ctx, bool is_chat,
                                                GenerationParams& out);
// Constrained output: response_format, structured_outputs / guided_*, grammar, json_schema ->
// out.grammar (GBNF) and out.grammar_param (parse_structured_output.cpp).
std::optional<ApiError> parse_structured_output(const nlohmann::ordered_json& body, GenerationParams& out);
// Chat messages and tools (parse_chat.cpp).
std::optional<ApiError> parse_chat_messages(const nlohmann::ordered_json& body, const ParseContext& ctx, ChatRequest& out);

}  // namespace kairo::server
