#pragma once
// An OpenAI-style error before it becomes JSON: the HTTP status and the four fields clients read
// ({"error": {"message", "type", "param", "code"}}). Every refusal in the server is one of these.
#include <string>
#include <utility>

#include "engine/engine_client.h"
#include "server/http/http_types.h"

namespace kairo::server {

struct ApiError {
  int status = 400;
  std::string message;
  std::string type = "invalid_request_error";
  std::string param;   // the offending field ("messages[2].role"), empty -> null
  std::string code;    // machine-readable ("context_length_exceeded"), empty -> null
  HeaderList headers;  // e.g. Retry-After with 429
};

// 400 naming the field.
inline ApiError invalid_param(std::string param, std::string message, std::string code = "") {
  return ApiError{400, std::move(message), "invalid_request_error", std::move(param), std::move(code), {}};
}

// The type string OpenAI uses for a status without a more specific one.
const char* default_error_type(int status);

// An error with the default type for its status.
ApiError api_error(int status, std::string message, std::string code = "");

// How an engine refusal reaches the client: QueueFull -> 429 + Retry-After, TooLong/Invalid -> 400,
// ShuttingDown -> 503, DeviceFailed -> 503 with the device error.
ApiError from_submit_rejection(const engine::SubmitRejection& rejection, int retry_after_s);

// Holds a value or the ApiError that prevented it.
template <typename T>
class ApiResult {
 public:
  ApiResult(T value) : value_(std::move(value)), ok_(true) {}            // NOLINT(google-explicit-constructor)
  ApiResult(ApiError error) : error_(std::move(error)), ok_(false) {}    // NOLINT(google-explicit-constructor)
  bool ok() const { return ok_; }
  T& value() { return value_; }
  const T& value() const { return value_; }
  T& operator*() { return value_; }
  T* operator->() { return &value_; }
  const ApiError& error() const { return error_; }

 private:
  T value_{};
  ApiError error_;
  bool ok_;
};

}  // namespace kairo::server
