#include "server/exchange.h"

#include "server/metrics.h"
#include "server/openai/render_response.h"

namespace kairo::server {

namespace {

HeaderList merged(HeaderList headers, const HeaderList& common) {
  headers.insert(headers.end(), common.begin(), common.end());
  return headers;
}

}  // namespace

Exchange::Exchange(std::shared_ptr<ResponseSink> inner, const HttpRequest& request, std::string request_id,
                   HeaderList common_headers, ServerMetrics* metrics, bool access_log)
    : inner_(std::move(inner)),
      common_headers_(std::move(common_headers)),
      metrics_(metrics),
      access_log_(access_log),
      render_error_(render_error),
      arrival_(std::chrono::steady_clock::now()) {
  log_.request_id = std::move(request_id);
  log_.remote = request.remote;
  log_.method = request.method;
  log_.path = request.path;
}

Exchange::~Exchange() {
  // A route that dropped the exchange without answering is a bug; the log still shows the request.
  if (!logged_ && log_.status == 0) log_.status = 500;
  finish_log();
}

void Exchange::send(HttpResponse response) {
  log_.status = response.status;
  if (metrics_) metrics_->count_http_status(response.status);
  response.headers = merged(std::move(response.headers), common_headers_);
  inner_->send(std::move(response));
  finish_log();
}

void Exchange::begin_stream(int status, std::string content_type, HeaderList headers) {
  log_.status = status;
  log_.stream = true;
  if (metrics_) metrics_->count_http_status(status);
  inner_->begin_stream(status, std::move(content_type), merged(std::move(headers), common_headers_));
}

void Exchange::end_stream() {
  inner_->end_stream();
  finish_log();
}

void Exchange::on_disconnect(std::function<void()> fn) {
  std::weak_ptr<Exchange> weak = weak_from_this();
  inner_->on_disconnect([weak, fn = std::move(fn)] {
    if (auto self = weak.lock()) {
      self->log_.client_disconnected = true;
      if (self->log_.status == 0) self->log_.status = 499;  // nginx's "client closed request"; nothing was sent
    }
    fn();
  });
}

void Exchange::send_error(const ApiError& error) {
  log_.error = error.message;
  HttpResponse resp;
  resp.status = error.status;
  resp.body = render_error_(error);
  resp.headers = error.headers;
  send(std::move(resp));
}

void Exchange::send_json(int status, std::string body) {
  HttpResponse resp;
  resp.status = status;
  resp.body = std::move(body);
  send(std::move(resp));
}

void Exchange::set_tokens(int prompt_tokens, int completion_tokens) {
  log_.prompt_tokens = prompt_tokens;
  log_.completion_tokens = completion_tokens;
}

void Exchange::finish_log() {
  if (logged_) return;
  logged_ = true;
  log_.duration_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - arrival_).count();
  if (access_log_) write_access_log(log_);
}

}  // namespace kairo::server
