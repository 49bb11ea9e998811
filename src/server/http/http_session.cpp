#include "server/http/http_session.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <exception>

#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/string.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/read.hpp>

#include "core/format.h"

namespace kairo::server::http_detail {

namespace http = beast::http;
using tcp = net::ip::tcp;

namespace {

// A pipelined request this large waits in the buffer; the disconnect monitor stops reading until it is served.
constexpr size_t kMaxBufferedAhead = 64 << 10;
// After an error response the rest of the request is read and dropped for a moment before closing, so the kernel
// does not answer the unread bytes with a reset that destroys the response before the client reads it.
constexpr size_t kMaxLingerBytes = 1 << 20;
constexpr auto kLingerTime = std::chrono::seconds(2);

std::chrono::steady_clock::duration seconds(double s) {
  return std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(s));
}

bool is_http_parse_error(const beast::error_code& ec) {
  return ec.category() == beast::http::make_error_code(http::error::need_more).category();
}

class SinkImpl final : public ResponseSink {
 public:
  SinkImpl(std::shared_ptr<Session> session, std::shared_ptr<SharedState> shared, uint64_t exchange)
      : session_(std::move(session)), shared_(std::move(shared)), exchange_(exchange) {}

  void post(std::function<void()> fn) override {
    std::lock_guard lock(shared_->mutex);
    if (shared_->stopped) return;  // nothing would ever run it
    net::post(session_->executor(), std::move(fn));
  }
  void send(HttpResponse response) override { session_->sink_send(exchange_, std::move(response)); }
  void begin_stream(int status, std::string content_type, HeaderList headers) override {
    session_->sink_begin_stream(exchange_, status, std::move(content_type), std::move(headers));
  }
  void write_chunk(std::string data) override { session_->sink_write_chunk(exchange_, std::move(data)); }
  void end_stream() override { session_->sink_end_stream(exchange_); }
  void on_disconnect(std::function<void()> fn) override { session_->sink_on_disconnect(exchange_, std::move(fn)); }
  bool connected() const override { return session_->sink_connected(exchange_); }

 private:
  std::shared_ptr<Session> session_;
  std::shared_ptr<SharedState> shared_;
  uint64_t exchange_;
};

}  // namespace

Session::Session(tcp::socket socket, std::shared_ptr<SharedState> shared)
    : shared_(std::move(shared)), stream_(std::move(socket)) {
  shared_->n_connections.fetch_add(1);
  beast::error_code ec;
  const auto ep = stream_.socket().remote_endpoint(ec);
  if (!ec) remote_ = ep.address().to_string() + ":" + std::to_string(ep.port());
  std::lock_guard lock(shared_->mutex);
  id_ = shared_->next_session_id++;
}

Session::~Session() {
  if (counted_) shared_->n_connections.fetch_sub(1);
  std::lock_guard lock(shared_->mutex);
  shared_->sessions.erase(id_);
}

void Session::start() {
  {
    std::lock_guard lock(shared_->mutex);
    shared_->sessions[id_] = weak_from_this();
  }
  net::dispatch(stream_.get_executor(), [self = shared_from_this()] { self->read_head(); });
}

void Session::reject(int status, const std::string& message) {
  net::dispatch(stream_.get_executor(), [self = shared_from_this(), status, message] {
    self->fail_transport(status, message);
  });
}

void Session::close_if_idle() {
  // A head that has started arriving is answered (with Connection: close); an idle wait ends now.
  if (state_ == State::ReadingHead && !(parser_ && parser_->got_some()) && buffer_.size() == 0) close();
}

void Session::read_head() {
  if (state_ == State::Closed) return;
  state_ = State::ReadingHead;
  if (shared_->shutting_down.load() && buffer_.size() == 0) {
    close();
    return;
  }
  parser_.emplace();
  parser_->header_limit(shared_->options.max_header_bytes);
  parser_->body_limit(shared_->options.max_body_bytes);
  stream_.expires_after(seconds(shared_->options.http.header_timeout_s));
  http::async_read_header(stream_, buffer_, *parser_,
                          [self = shared_from_this()](beast::error_code ec, size_t) { self->on_head(ec); });
}

void Session::on_head(beast::error_code ec) {
  if (state_ == State::Closed) return;
  if (ec == http::error::header_limit) {
    return fail_transport(431, strprintf("the request head is larger than %u bytes; send fewer or shorter headers "
                                         "(the server's limit is --max-header-bytes)",
                                         shared_->options.max_header_bytes));
  }
  if (ec == http::error::body_limit) {
    // The parser stops at the Content-Length field itself, so it is read from the fields parsed so far, if there.
    std::string size;
    const auto& fields = parser_->get();
    if (auto it = fields.find(http::field::content_length); it != fields.end()) {
      const std::string value(it->value());
      if (!value.empty() && value.size() <= 20 && value.find_first_not_of("0123456789") == std::string::npos) {
        size = " of " + value + " bytes";
      }
    }
    return fail_transport(413, strprintf("the request body%s is larger than the limit of %llu bytes (the server's "
                                         "--max-body-bytes)",
                                         size.c_str(),
                                         static_cast<unsigned long long>(shared_->options.max_body_bytes)));
  }
  if (ec && is_http_parse_error(ec) && ec != http::error::end_of_stream && ec != http::error::partial_message) {
    return fail_transport(400, "malformed HTTP request: " + ec.message());
  }
  if (ec) return close();  // peer closed, reset or too slow (timeout already closed the socket)

  const auto& head = parser_->get();
  if (beast::iequals(head[http::field::expect], "100-continue") && !parser_->is_done()) {
    // curl and others wait for this before sending a body over 1 KiB.
    auto interim = std::make_shared<std::string>("HTTP/1.1 100 Continue\r\n\r\n");
    stream_.expires_after(seconds(shared_->options.http.write_timeout_s));
    net::async_write(stream_, net::buffer(*interim),
                     [self = shared_from_this(), interim](beast::error_code wec, size_t) {
                       if (wec) return self->close();
                       self->read_body();
                     });
    return;
  }
  read_body();
}

void Session::read_body() {
  if (state_ == State::Closed) return;
  state_ = State::ReadingBody;
  if (parser_->is_done()) return dispatch_request();
  stream_.expires_after(seconds(shared_->options.http.body_timeout_s));
  http::async_read(stream_, buffer_, *parser_,
                   [self = shared_from_this()](beast::error_code ec, size_t) { self->on_body(ec); });
}

void Session::on_body(beast::error_code ec) {
  if (state_ == State::Closed) return;
  if (ec == http::error::body_limit) {
    return fail_transport(413, strprintf("the request body is larger than the limit of %llu bytes "
                                         "(the server's --max-body-bytes)",
                                         static_cast<unsigned long long>(shared_->options.max_body_bytes)));
  }
  if (ec && is_http_parse_error(ec) && ec != http::error::end_of_stream && ec != http::error::partial_message) {
    return fail_transport(400, "malformed HTTP request body: " + ec.message());
  }
  if (ec) return close();
  dispatch_request();
}

void Session::dispatch_request() {
  auto msg = parser_->release();
  parser_.reset();
  HttpRequest req;
  req.method = std::string(msg.method_string());
  req.target = std::string(msg.target());
  req.path = req.target.substr(0, req.target.find('?'));
  for (const auto& field : msg) {
    std::string name(field.name_string());
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
    req.headers.emplace_back(std::move(name), std::string(field.value()));
  }
  req.body = std::move(msg.body());
  req.remote = remote_;

  keep_alive_ = msg.keep_alive() && !shared_->shutting_down.load();
  ++exchange_;
  response_started_ = false;
  response_done_ = false;
  on_disconnect_ = nullptr;
  state_ = State::Handling;
  start_monitor();

  auto sink = std::make_shared<SinkImpl>(shared_from_this(), shared_, exchange_);
  try {
    shared_->handler(std::move(req), sink);
  } catch (const std::exception& e) {
    // A route bug must not take the connection's thread down; the client gets a 500 it can report.
    std::fprintf(stderr, "kairo serve: internal error handling %s: %s\n", req.target.c_str(), e.what());
    if (!response_started_) sink_send(exchange_, shared_->format_error(500, "internal server error"));
  }
}

// While a request is handled, a read stays posted: EOF or a reset means the client left, and the route is told
// (so the engine request is aborted). Bytes that arrive are a pipelined next request and stay in the buffer.
void Session::start_monitor() {
  if (monitor_pending_ || buffer_.size() >= kMaxBufferedAhead) return;
  if (state_ != State::Handling && state_ != State::Streaming) return;
  if (!writing_) stream_.expires_never();
  monitor_pending_ = true;
  stream_.async_read_some(buffer_.prepare(4096), [self = shared_from_this()](beast::error_code ec, size_t n) {
    self->on_monitor(ec, n);
  });
}

void Session::on_monitor(beast::error_code ec, size_t n) {
  monitor_pending_ = false;
  if (state_ == State::Lingering) {
    stream_.expires_after(kLingerTime);
    return on_linger(ec, n);
  }
  if (!ec) buffer_.commit(n);
  if (state_ == State::Closed) return;
  if (resume_after_monitor_) {
    resume_after_monitor_ = false;
    return read_head();
  }
  if (!ec) return start_monitor();
  if (ec == net::error::operation_aborted) return;
  if (response_done_) {
    keep_alive_ = false;  // half-closed after a complete request: finish writing, then close
    return;
  }
  handle_disconnect();
}

void Session::handle_disconnect() {
  if (state_ == State::Closed) return;
  close();
}

void Session::close() {
  if (state_ == State::Closed) return;
  state_ = State::Closed;
  if (counted_) {
    // A closed connection stops counting now, even if a route still holds its sink.
    counted_ = false;
    shared_->n_connections.fetch_sub(1);
  }
  beast::error_code ec;
  stream_.socket().shutdown(tcp::socket::shutdown_both, ec);
  stream_.close();
  write_queue_.clear();
  if (!response_done_ && on_disconnect_) {
    auto fn = std::move(on_disconnect_);
    on_disconnect_ = nullptr;
    fn();
  }
  on_disconnect_ = nullptr;
}

void Session::fail_transport(int status, const std::string& message) {
  if (state_ == State::Closed) return;
  keep_alive_ = false;
  ++exchange_;  // any sink of an earlier request is now stale
  response_started_ = true;
  response_done_ = true;
  state_ = State::Handling;
  HttpResponse resp = shared_->format_error(status, message);
  queue_write(format_head(resp.status, resp.content_type, resp.headers, resp.body.size()) + resp.body);
}

std::string Session::format_head(int status, const std::string& content_type, const HeaderList& headers,
                                 std::optional<size_t> content_length) const {
  std::string head = strprintf("HTTP/1.1 %d %s\r\nServer: kairo\r\n", status, http_status_text(status));
  if (!content_type.empty()) head += "Content-Type: " + content_type + "\r\n";
  if (content_length) {
    head += "Content-Length: " + std::to_string(*content_length) + "\r\n";
  } else {
    head += "Transfer-Encoding: chunked\r\n";
  }
  const bool keep = keep_alive_ && !shared_->shutting_down.load();
  head += keep ? "Connection: keep-alive\r\n" : "Connection: close\r\n";
  for (const auto& [name, value] : headers) head += name + ": " + value + "\r\n";
  head += "\r\n";
  return head;
}

void Session::sink_send(uint64_t exchange, HttpResponse response) {
  if (exchange != exchange_ || state_ == State::Closed || response_started_) return;
  response_started_ = true;
  response_done_ = true;
  if (shared_->shutting_down.load()) keep_alive_ = false;
  queue_write(format_head(response.status, response.content_type, response.headers, response.body.size()) +
              response.body);
}

void Session::sink_begin_stream(uint64_t exchange, int status, std::string content_type, HeaderList headers) {
  if (exchange != exchange_ || state_ == State::Closed || response_started_) return;
  response_started_ = true;
  state_ = State::Streaming;
  queue_write(format_head(status, content_type, headers, std::nullopt));
}

void Session::sink_write_chunk(uint64_t exchange, std::string data) {
  if (exchange != exchange_ || state_ != State::Streaming || response_done_ || data.empty()) return;
  queue_write(strprintf("%zx\r\n", data.size()) + data + "\r\n");
}

void Session::sink_end_stream(uint64_t exchange) {
  if (exchange != exchange_ || state_ != State::Streaming || response_done_) return;
  response_done_ = true;
  if (shared_->shutting_down.load()) keep_alive_ = false;
  queue_write("0\r\n\r\n");
}

void Session::sink_on_disconnect(uint64_t exchange, std::function<void()> fn) {
  if (exchange != exchange_ || response_done_) return;
  if (state_ == State::Closed) {
    fn();  // already gone: tell the route at once
    return;
  }
  on_disconnect_ = std::move(fn);
}

bool Session::sink_connected(uint64_t exchange) const {
  return exchange == exchange_ && state_ != State::Closed && state_ != State::Lingering;
}

void Session::queue_write(std::string bytes) {
  write_queue_.push_back(std::move(bytes));
  if (!writing_) do_write();
}

void Session::do_write() {
  write_buf_.clear();
  for (auto& piece : write_queue_) write_buf_ += piece;
  write_queue_.clear();
  writing_ = true;
  stream_.expires_after(seconds(shared_->options.http.write_timeout_s));
  net::async_write(stream_, net::buffer(write_buf_),
                   [self = shared_from_this()](beast::error_code ec, size_t) { self->on_write(ec); });
}

void Session::on_write(beast::error_code ec) {
  writing_ = false;
  if (state_ == State::Closed) return;
  if (ec) return handle_disconnect();
  if (!write_queue_.empty()) return do_write();
  if (response_done_) finish_response();
}

void Session::finish_response() {
  on_disconnect_ = nullptr;
  if (!keep_alive_ || shared_->shutting_down.load()) return lingering_close();
  next_request();
}

void Session::next_request() {
  state_ = State::ReadingHead;
  if (monitor_pending_) {
    // The monitor's read must end before the parser reads; what it already read stays in the buffer.
    resume_after_monitor_ = true;
    beast::error_code ec;
    stream_.socket().cancel(ec);
    return;
  }
  read_head();
}

void Session::lingering_close() {
  if (state_ == State::Closed) return;
  state_ = State::Lingering;
  if (counted_) {
    // Only input is drained from here on: the connection no longer counts as open (for the cap and for stop()).
    counted_ = false;
    shared_->n_connections.fetch_sub(1);
  }
  beast::error_code ec;
  stream_.socket().shutdown(tcp::socket::shutdown_send, ec);
  if (ec) return close();
  if (monitor_pending_) return;  // its completion lands in on_monitor, which closes lingering sessions below
  stream_.expires_after(kLingerTime);
  buffer_.clear();
  stream_.async_read_some(buffer_.prepare(16 << 10), [self = shared_from_this()](beast::error_code rec, size_t n) {
    self->on_linger(rec, n);
  });
}

void Session::on_linger(beast::error_code ec, size_t n) {
  if (state_ != State::Lingering) return;
  n_lingered_ += n;
  if (ec || n_lingered_ > kMaxLingerBytes) return close();
  buffer_.clear();
  stream_.async_read_some(buffer_.prepare(16 << 10), [self = shared_from_this()](beast::error_code rec, size_t m) {
    self->on_linger(rec, m);
  });
}

}  // namespace kairo::server::http_detail
