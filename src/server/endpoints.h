#pragma once
// The endpoint handlers behind the router (internal to the server module). Each answers on the exchange.
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "server/api_error.h"
#include "server/auth.h"
#include "server/exchange.h"
#include "server/http/http_types.h"
#include "server/openai/request_types.h"
#include "server/response_writer.h"
#include "server/server_context.h"

namespace kairo::server {

// The caller's tenant limits apply (tenant_usage.h); its name and weight go to the engine requests.
void handle_completions(const std::shared_ptr<ServerContext>& ctx, const Backend& backend, const HttpRequest& req,
                        const Caller& caller, std::shared_ptr<Exchange> exchange);
void handle_chat_completions(const std::shared_ptr<ServerContext>& ctx, const Backend& backend,
                             const HttpRequest& req, const Caller& caller, std::shared_ptr<Exchange> exchange);
// Anthropic's Messages API (messages_endpoint.cpp) and OpenAI's Responses API (responses_endpoint.cpp): their
// requests become a ChatRequest and go the chat path (submit_chat) with their own ResponseWriter.
void handle_messages(const std::shared_ptr<ServerContext>& ctx, const Backend& backend, const HttpRequest& req,
                     const Caller& caller, std::shared_ptr<Exchange> exchange);
void handle_count_tokens(ServerContext& ctx, const Backend& backend, const HttpRequest& req, const Caller& caller,
                         Exchange& exchange);
void handle_responses(const std::shared_ptr<ServerContext>& ctx, const Backend& backend, const HttpRequest& req,
                      const Caller& caller, std::shared_ptr<Exchange> exchange);
// OpenAI's embeddings API (embeddings_endpoint.cpp), for a model whose GGUF declares a pooling type (ModelInfo::pooling).
void handle_embeddings(const std::shared_ptr<ServerContext>& ctx, const Backend& backend, const HttpRequest& req,
                       const Caller& caller, std::shared_ptr<Exchange> exchange);
void handle_tokenize(ServerContext& ctx, const Backend& backend, const HttpRequest& req, Exchange& exchange);
void handle_detokenize(ServerContext& ctx, const Backend& backend, const HttpRequest& req, Exchange& exchange);

// The chat path once a request is parsed, whichever API it came in: the model and key checks, the prompt, the tool-call
// grammar (tool_choice), then the generation job. `writer` null: OpenAI's chat.completion shape.
void submit_chat(const std::shared_ptr<ServerContext>& ctx, const Backend& backend, const Caller& caller,
                 std::shared_ptr<Exchange> exchange, ChatRequest chat, std::unique_ptr<ResponseWriter> writer = nullptr);

// The model name a response shows: the one requested, or the served model's id when none was.
std::string response_model(const ServedModel& model, const std::string& requested);

// 404 when `model` is set and is not a name this server serves.
std::optional<ApiError> check_model_name(const ServedModel& model, const std::string& name);

// The served model's names: its id, then its aliases.
std::vector<std::string> served_names(const ModelInfo& model);
// What `name` is among the names `kairo serve` starts with: 0 for the base model (its id, an alias or ""), i + 1 for
// the --lora adapter model.adapters[i], -1 for another name. Requests resolve names through ServerContext::loras
// (lora_selection.h), which also holds the adapters loaded while serving.
int adapter_index(const ModelInfo& model, const std::string& name);

// 403 when the caller's key may not use `model` (the tenant's "models"); counts the refusal for /metrics.
std::optional<ApiError> check_tenant_model(const ServerContext& ctx, const ServedModel& served, const Caller& caller,
                                           const std::string& model);

// The chat prompt's token ids: the template rendered, then tokenized with special tokens parsed and a BOS added when
// the model wants one and the template did not write it. Tokenizing may stop once there are more than max_tokens
// (Tokenizer::encode_at_most): then past_limit is set and `tokens` holds only the first ones.
struct ChatPrompt {
  std::vector<int32_t> tokens;
  bool past_limit = false;
  bool opens_thinking = false;  // the rendered prompt ends inside an opened `<think>` block (Qwen3, DeepSeek-R1)
};
ApiResult<ChatPrompt> chat_prompt_tokens(const Backend& backend, const ChatRequest& chat,
                                         size_t max_tokens = SIZE_MAX);

}  // namespace kairo::server
