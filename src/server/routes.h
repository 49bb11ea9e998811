#pragma once
// Routing of HTTP requests: request id, CORS, API-key check, readiness, then the endpoint. Every failure becomes an
// OpenAI-style error with its status (401, 404, 405, 503, ...).
#include <memory>
#include <string>

#include "server/auth.h"
#include "server/exchange.h"
#include "server/http/http_types.h"
#include "server/server_context.h"

namespace kairo::server {

// How an error to a request for `path` is written: Anthropic's shape on /v1/messages and /v1/messages/count_tokens
// (Anthropic's clients read no other), OpenAI's everywhere else. The transport's refusals (413, framing, 408 on a slow
// body) use it too once the request head names the path.
Exchange::ErrorRenderer error_renderer_for(const std::string& path);

class Router {
 public:
  explicit Router(std::shared_ptr<ServerContext> ctx) : ctx_ptr_(std::move(ctx)), ctx_(*ctx_ptr_) {}
  void handle(HttpRequest request, std::shared_ptr<ResponseSink> sink);

 private:
  // The model's context: its engine's when loaded, else what serve planned for it (ModelInfo::context_length).
  int context_length(const ServedModel& model) const;
  std::string render_model_list(const Caller& caller) const;  // GET /v1/models: every served model, loaded or not
  std::string render_metrics() const;                         // every model's series, the tenants', the model switches'

  std::shared_ptr<ServerContext> ctx_ptr_;
  ServerContext& ctx_;
};

}  // namespace kairo::server
