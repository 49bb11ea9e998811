#include "server/api_error.h"

#include <string>

namespace kairo::server {

const char* default_error_type(int status) {
  switch (status) {
    case 401: return "authentication_error";
    case 403: return "permission_error";
    case 404: return "not_found_error";
    case 429: return "rate_limit_error";
    case 500: return "server_error";
    case 503: return "service_unavailable_error";
    default: return "invalid_request_error";
  }
}

ApiError api_error(int status, std::string message, std::string code) {
  ApiError e;
  e.status = status;
  e.message = std::move(message);
  e.type = default_error_type(status);
  e.code = std::move(code);
  return e;
}

ApiError from_submit_rejection(const engine::SubmitRejection& rejection, int retry_after_s) {
  switch (rejection.kind) {
    case engine::SubmitError::QueueFull: {
      ApiError e = api_error(429, "the server is at capacity (" + rejection.message + "); retry after " +
                                      std::to_string(retry_after_s) + " s",
                             "rate_limit_exceeded");
      e.headers.emplace_back("Retry-After", std::to_string(retry_after_s));
      return e;
    }
    case engine::SubmitError::TooLong:
      return api_error(400, rejection.message, "context_length_exceeded");
    case engine::SubmitError::Invalid:
      return api_error(400, rejection.message);
    case engine::SubmitError::ShuttingDown:
      return api_error(503, "the server is shutting down and takes no new requests: " + rejection.message,
                       "shutting_down");
    case engine::SubmitError::DeviceFailed:
      return api_error(503, rejection.message, "device_failed");
  }
  return api_error(500, "unknown engine rejection: " + rejection.message);
}

}  // namespace kairo::server
