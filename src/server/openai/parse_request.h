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

// Completions' `prompt` and embeddings' `input` (named by `key`): a string, an array of strings, an array of token ids,
// or an array of token-id arrays; at most --max-prompts of them, none empty.
std::optional<ApiError> parse_prompt_list(const nlohmann::ordered_json& body, const char* key, const ParseContext& ctx,
                                          std::vector<Prompt>& out);
ApiResult<CompletionRequest> parse_completion_request(const nlohmann::ordered_json& body, const ParseContext& ctx);
ApiResult<ChatRequest> parse_chat_request(const nlohmann::ordered_json& body, const ParseContext& ctx);
// The Responses API (parse_responses.cpp), stateless: input items and instructions -> chat messages, function tools,
// text.format -> structured output; what needs stored responses (previous_response_id, conversation, background,
// item references) is refused.
ApiResult<ResponsesRequest> parse_responses_request(const nlohmann::ordered_json& body, const ParseContext& ctx);
// Its `instructions` and `input` as chat messages for parse_chat_messages (parse_response_input.cpp).
std::optional<ApiError> translate_response_input(const nlohmann::ordered_json& body, const ParseContext& ctx,
                                                 nlohmann::ordered_json& messages);
// POST /v1/embeddings (parse_embeddings.cpp).
ApiResult<EmbeddingsRequest> parse_embeddings_request(const nlohmann::ordered_json& body, const ParseContext& ctx);
ApiResult<TokenizeRequest> parse_tokenize_request(const nlohmann::ordered_json& body, const ParseContext& ctx);
ApiResult<DetokenizeRequest> parse_detokenize_request(const nlohmann::ordered_json& body, const ParseContext& ctx);

// Shared by the two generation endpoints (parse_generation.cpp); is_chat selects chat's logprobs/top_logprobs and
// max_completion_tokens.
std::optional<ApiError> parse_generation_params(const nlohmann::ordered_json& body, const ParseContext& ctx, bool is_chat,
                                                GenerationParams& out);
// The pieces of parse_generation_params other APIs name differently (Anthropic's stop_sequences, the Responses API's
// max_output_tokens): `key` is the field read and the param errors name.
std::optional<ApiError> parse_stop_strings(const nlohmann::ordered_json& value, const std::string& key,
                                           const ParseContext& ctx, std::vector<std::string>& out);
std::optional<ApiError> parse_max_tokens(const nlohmann::ordered_json& body, const char* key, const ParseContext& ctx,
                                         GenerationParams& out);
// Constrained output: response_format, structured_outputs / guided_*, grammar, json_schema ->
// out.grammar (GBNF) and out.grammar_param (parse_structured_output.cpp).
std::optional<ApiError> parse_structured_output(const nlohmann::ordered_json& body, GenerationParams& out);
// A JSON schema as GBNF; errors name `param` (parse_structured_output.cpp).
ApiResult<std::string> schema_grammar(const nlohmann::ordered_json& schema, const std::string& param);
// LoRA (parse_lora.cpp): llama-server's per-request `lora` list into out.lora, and the load / unload bodies.
std::optional<ApiError> parse_lora_field(const nlohmann::ordered_json& body, GenerationParams& out);
ApiResult<LoadLoraRequest> parse_load_lora_request(const nlohmann::ordered_json& body);
ApiResult<UnloadLoraRequest> parse_unload_lora_request(const nlohmann::ordered_json& body);
// Chat messages and tools (parse_chat.cpp).
std::optional<ApiError> parse_chat_messages(const nlohmann::ordered_json& body, const ParseContext& ctx, ChatRequest& out);

}  // namespace kairo::server
