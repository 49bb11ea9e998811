// POST /v1/messages and /v1/messages/count_tokens: Anthropic's Messages API over the chat path. The request becomes a
// ChatRequest (anthropic/parse_messages.h) and goes where /v1/chat/completions goes; only the wire format differs
// (anthropic/messages_writer.h). The router has set Anthropic's error shape on the exchange.
#include <nlohmann/json.hpp>

#include "server/anthropic/messages_writer.h"
#include "server/anthropic/parse_messages.h"
#include "server/endpoints.h"
#include "server/response_ids.h"

namespace kairo::server {

void handle_messages(const std::shared_ptr<ServerContext>& ctx_ptr, const Backend& backend, const HttpRequest& req,
                     const Caller& caller, std::shared_ptr<Exchange> exchange) {
  const ServerContext& ctx = *ctx_ptr;
  auto body = parse_json_body(req.body, ctx.config.limits.max_json_depth);
  if (!body.ok()) return exchange->send_error(body.error());
  auto parsed = parse_messages_request(*body, ParseContext{ctx.config.limits, backend.engine->n_vocab()});
  if (!parsed.ok()) return exchange->send_error(parsed.error());
  auto writer =
      std::make_unique<MessagesWriter>(random_alnum_id("msg_"), response_model(*backend.model, parsed->params.model));
  submit_chat(ctx_ptr, backend, caller, std::move(exchange), std::move(*parsed), std::move(writer));
}

void handle_count_tokens(ServerContext& ctx, const Backend& backend, const HttpRequest& req, const Caller& caller,
                         Exchange& exchange) {
  auto body = parse_json_body(req.body, ctx.config.limits.max_json_depth);
  if (!body.ok()) return exchange.send_error(body.error());
  auto parsed = parse_messages_request(*body, ParseContext{ctx.config.limits, backend.engine->n_vocab()},
                                       MessagesUse::CountTokens);
  if (!parsed.ok()) return exchange.send_error(parsed.error());
  if (auto e = check_model_name(*backend.model, parsed->params.model)) return exchange.send_error(*e);
  if (auto e = check_tenant_model(ctx, *backend.model, caller, parsed->params.model)) return exchange.send_error(*e);
  auto prompt = chat_prompt_tokens(backend, *parsed);
  if (!prompt.ok()) return exchange.send_error(prompt.error());
  exchange.send_json(200, nlohmann::json{{"input_tokens", prompt->tokens.size()}}.dump());
}

}  // namespace kairo::server
