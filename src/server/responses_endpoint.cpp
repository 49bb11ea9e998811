// POST /v1/responses: OpenAI's Responses API, stateless, over the chat path. The request becomes a ChatRequest
// (openai/parse_responses.cpp) and goes where /v1/chat/completions goes; only the wire format differs
// (openai/responses_writer.h).
#include "server/endpoints.h"
#include "server/openai/parse_request.h"
#include "server/openai/responses_writer.h"
#include "server/response_ids.h"

namespace kairo::server {

void handle_responses(const std::shared_ptr<ServerContext>& ctx_ptr, const Backend& backend, const HttpRequest& req,
                      const Caller& caller, std::shared_ptr<Exchange> exchange) {
  const ServerContext& ctx = *ctx_ptr;
  auto body = parse_json_body(req.body, ctx.config.limits.max_json_depth);
  if (!body.ok()) return exchange->send_error(body.error());
  auto parsed = parse_responses_request(*body, ParseContext{ctx.config.limits, backend.engine->n_vocab()});
  if (!parsed.ok()) return exchange->send_error(parsed.error());
  auto writer = std::make_unique<ResponsesWriter>(random_hex_id("resp_"), unix_now(),
                                                  response_model(*backend.model, parsed->chat.params.model),
                                                  std::move(parsed->echo));
  submit_chat(ctx_ptr, backend, caller, std::move(exchange), std::move(parsed->chat), std::move(writer));
}

}  // namespace kairo::server
