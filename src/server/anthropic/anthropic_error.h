#pragma once
// Errors in the shape of Anthropic's API, for /v1/messages: {"type": "error", "error": {"type", "message"}}. The
// HTTP status is kairo's own (the same refusal as on the OpenAI endpoints); the type is what Anthropic's API names
// that status, which is what its clients branch on.
#include <string>

#include "server/api_error.h"

namespace kairo::server {

// invalid_request_error (400 and other 4xx), authentication_error (401), permission_error (403), not_found_error
// (404), request_too_large (413), rate_limit_error (429), api_error (500 and other 5xx), overloaded_error (503, 529:
// loading, shutting down, a failed device).
const char* anthropic_error_type(int status);

// The error object, as a response body or as the data of a stream's `event: error`.
std::string render_anthropic_error(const ApiError& error);

}  // namespace kairo::server
