#pragma once
// One request/response as the routes see it: wraps the HTTP layer's sink, adds the headers every response carries
// (X-Request-Id, CORS), counts the status for /metrics and writes the access-log line when the exchange ends
// (response complete, or client gone). Runs on the connection's executor like the sink it wraps.
#include <chrono>
#include <memory>
#include <string>

#include "server/access_log.h"
#include "server/api_error.h"
#include "server/http/http_types.h"

namespace kairo::server {

class ServerMetrics;

class Exchange final : public ResponseSink, public std::enable_shared_from_this<Exchange> {
 public:
  Exchange(std::shared_ptr<ResponseSink> inner, const HttpRequest& request, std::string request_id,
           HeaderList common_headers, ServerMetrics* metrics, bool access_log);
  ~Exchange() override;

  void post(std::function<void()> fn) override { inner_->post(std::move(fn)); }
  void send(HttpResponse response) override;
  void begin_stream(int status, std::string content_type, HeaderList headers) override;
  void write_chunk(std::string data) override { inner_->write_chunk(std::move(data)); }
  void end_stream() override;
  void on_disconnect(std::function<void()> fn) override;
  bool connected() const override { return inner_->connected(); }

  // The error's JSON in the shape of the API the request was for: OpenAI's {"error": {...}} unless the route sets
  // another (Anthropic's Messages API has its own), before anything can fail.
  using ErrorRenderer = std::string (*)(const ApiError&);
  void set_error_renderer(ErrorRenderer render) { render_error_ = render; }
  void send_error(const ApiError& error);
  void send_json(int status, std::string body);
  // Token counts for the access log.
  void set_tokens(int prompt_tokens, int completion_tokens);

  const std::string& request_id() const { return log_.request_id; }
  std::chrono::steady_clock::time_point arrival() const { return arrival_; }

 private:
  void finish_log();

  std::shared_ptr<ResponseSink> inner_;
  HeaderList common_headers_;
  ServerMetrics* metrics_;
  bool access_log_;
  ErrorRenderer render_error_;
  std::chrono::steady_clock::time_point arrival_;
  AccessLogEntry log_;
  bool logged_ = false;
};

}  // namespace kairo::server
