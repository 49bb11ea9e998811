#include "server/anthropic/anthropic_error.h"

#include <nlohmann/json.hpp>

namespace kairo::server {

const char* anthropic_error_type(int status) {
  switch (status) {
    case 401: return "authentication_error";
    case 403: return "permission_error";
    case 404: return "not_found_error";
    case 413: return "request_too_large";
    case 429: return "rate_limit_error";
    case 503:
    case 529: return "overloaded_error";
    default: return status >= 500 ? "api_error" : "invalid_request_error";
  }
}

std::string render_anthropic_error(const ApiError& error) {
  const nlohmann::json body = {{"type", "error"},
                               {"error", {{"type", anthropic_error_type(error.status)}, {"message", error.message}}}};
  return body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace kairo::server
