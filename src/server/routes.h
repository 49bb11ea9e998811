#pragma once
// Routing of HTTP requests: request id, CORS, API-key check, readiness, then the endpoint. Every failure becomes an
// OpenAI-style error with its status (401, 404, 405, 503, ...).
#include <memory>

#include "server/http/http_types.h"
#include "server/server_context.h"

namespace kairo::server {

class Router {
 public:
  explicit Router(std::shared_ptr<ServerContext> ctx) : ctx_ptr_(std::move(ctx)), ctx_(*ctx_ptr_) {}
  void handle(HttpRequest request, std::shared_ptr<ResponseSink> sink);

 private:
  std::shared_ptr<ServerContext> ctx_ptr_;
  ServerContext& ctx_;
};

}  // namespace kairo::server
