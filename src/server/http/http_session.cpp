#include "server/http/http_session.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <exception>
#include <iterator>

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
    : shared_(std::move(shared)),
      stream_(std::move(socket), shared_->options.tls.get()),
      scanner_(shared_->options.max_header_bytes),
      deadline_(stream_.get_executor()) {
  shared_->n_connections.fetch_add(1);
  beast::error_code ec;
  const auto ep = stream_.socket().remote_endpoint(ec);
  if (!ec) {
    address_ = ep.address().to_string();
    remote_ = address_ + ":" + std::to_string(ep.port());
  }
  std::lock_guard lock(shared_->mutex);
  id_ = shared_->next_session_id++;
  ++shared_->connections_per_address[address_];
}

Session::~Session() {
  uncount();
  std::lock_guard lock(shared_->mutex);
  shared_->sessions.erase(id_);
}

// A connection stops counting (for --max-connections, the per-client cap and stop()) once it is closed or only
// drains input before closing, even if a route still holds its sink.
void Session::uncount() {
  if (!counted_) return;
  counted_ = false;
  shared_->n_connections.fetch_sub(1);
  release_shed_claim();
  std::lock_guard lock(shared_->mutex);
  auto it = shared_->connections_per_address.find(address_);
  if (it != shared_->connections_per_address.end() && --it->second <= 0) shared_->connections_per_address.erase(it);
}

void Session::start() {
  {
    std::lock_guard lock(shared_->mutex);
    shared_->sessions[id_] = weak_from_this();
  }
  net::dispatch(stream_.get_executor(), [self = shared_from_this()] {
    self->after_handshake([self] { self->read_head(); });
  });
}

void Session::reject(int status, const std::string& message) {
  net::dispatch(stream_.get_executor(), [self = shared_from_this(), status, message] {
    self->after_handshake([self, status, message] { self->fail_transport(status, message); });
  });
}

// A TLS connection's handshake comes first, within the head's time limit; a client that fails it (a plain-HTTP
// client, an old TLS version, no common cipher) is closed, since no HTTP answer could reach it.
void Session::after_handshake(std::function<void()> then) {
  if (!stream_.is_tls()) return then();
  // A slow handshake holds a slot like a slow head, so it may be shed like one (without the 408: no TLS yet).
  handshaking_ = true;
  head_wait_since_ns_.store(std::chrono::steady_clock::now().time_since_epoch().count());
  stream_.expires_after(seconds(shared_->options.http.header_timeout_s));
  stream_.async_handshake([self = shared_from_this(), then = std::move(then)](beast::error_code ec) {
    self->handshaking_ = false;
    self->head_wait_since_ns_.store(0);
    if (self->state_ == State::Closed) return;
    if (ec) return self->close();
    self->stream_.expires_never();
    then();
  });
}

void Session::close_if_idle() {
  // A head that has started arriving is answered (with Connection: close); an idle wait ends now.
  if (state_ == State::ReadingHead && buffer_.size() == 0) close();
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
  scanner_.reset();
  head_wait_since_ns_.store(std::chrono::steady_clock::now().time_since_epoch().count());
  stream_.expires_never();
  arm_deadline(shared_->options.http.header_timeout_s);
  continue_head();
}

// Scans what has arrived (a pipelined request may be buffered already) and reads more until the head is complete.
void Session::continue_head() {
  const auto data = buffer_.data();
  const std::string_view received(static_cast<const char*>(data.data()), data.size());
  switch (scanner_.scan(received)) {
    case RequestHeadScanner::State::Refused: return fail_transport(scanner_.refusal().status, scanner_.refusal().message);
    case RequestHeadScanner::State::Complete: return on_head_parsed();
    case RequestHeadScanner::State::NeedMore: break;
  }
  stream_.async_read_some(buffer_.prepare(4096), [self = shared_from_this()](beast::error_code ec, size_t n) {
    self->on_head_bytes(ec, n);
  });
}

void Session::on_head_bytes(beast::error_code ec, size_t n) {
  if (state_ == State::Closed) return;
  if (!ec) buffer_.commit(n);
  if (interrupt_ != Interrupt::None) {
    // An idle keep-alive connection just closes: a 408 there could cross a request the client is sending now and be
    // read as its answer. A head begun (or never sent on a new connection) gets the 408 first.
    if (n_answered_ > 0 && buffer_.size() == 0) return close();
    if (interrupt_ == Interrupt::Shed) {
      return fail_transport(408, strprintf("the server reached its limit of %d connections and closed this one, "
                                           "which had not sent a complete request head; retry (the server's "
                                           "--max-connections)",
                                           shared_->options.http.max_connections));
    }
    return fail_transport(408, strprintf("the request head did not arrive within %g s; send the whole head at once "
                                         "(the server's --header-timeout)",
                                         shared_->options.http.header_timeout_s));
  }
  if (ec) return close();  // peer closed or reset
  continue_head();
}

void Session::on_head_parsed() {
  head_wait_since_ns_.store(0);
  buffer_.consume(scanner_.leading_bytes());
  beast::error_code ec;
  const size_t used = parser_->put(net::buffer(buffer_.data().data(), scanner_.head_bytes()), ec);
  if (!ec && !parser_->is_header_done()) ec = http::error::partial_message;
  if (ec) {
    const auto& opts = shared_->options;
    const Refusal r = refusal_for_parse_error(ec, false, opts.max_body_bytes, opts.max_header_bytes, parser_->get());
    return fail_transport(r.status, r.message);
  }
  buffer_.consume(used);
  n_head_fields_ = static_cast<size_t>(std::distance(parser_->get().begin(), parser_->get().end()));
  const FramingDecision decision = decide_framing(parser_->get().version(), parser_->get());
  if (!decision.framing) return fail_transport(decision.refusal.status, decision.refusal.message);

  const auto& head = parser_->get();
  if (beast::iequals(head[http::field::expect], "100-continue") && !parser_->is_done()) {
    // curl and others wait for this before sending a body over 1 KiB.
    deadline_.cancel();
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
  if (parser_->is_done()) {
    deadline_.cancel();
    return dispatch_request();
  }
  stream_.expires_never();
  arm_deadline(shared_->options.http.body_timeout_s);
  http::async_read(stream_, buffer_, *parser_,
                   [self = shared_from_this()](beast::error_code ec, size_t) { self->on_body(ec); });
}

void Session::on_body(beast::error_code ec) {
  if (state_ == State::Closed) return;
  deadline_.cancel();
  if (interrupt_ == Interrupt::Deadline) {
    return fail_transport(408, strprintf("the request body did not arrive within %g s (the server's --body-timeout)",
                                         shared_->options.http.body_timeout_s));
  }
  if (ec && ec != http::error::end_of_stream && ec != http::error::partial_message && is_http_parse_error(ec)) {
    const auto& opts = shared_->options;
    const Refusal r = refusal_for_parse_error(ec, true, opts.max_body_bytes, opts.max_header_bytes, parser_->get());
    return fail_transport(r.status, r.message);
  }
  if (ec) return close();
  dispatch_request();
}

void Session::arm_deadline(double s) {
  interrupt_ = Interrupt::None;
  deadline_.expires_after(seconds(s));
  deadline_.async_wait([self = shared_from_this()](beast::error_code ec) {
    if (!ec) self->on_deadline();
  });
}

// The read in progress ends with operation_aborted; its handler sees why and answers 408. (Answering here would
// start a second read, the lingering one, beside the pending one.)
void Session::on_deadline() {
  if (state_ != State::ReadingHead && state_ != State::ReadingBody) return;
  interrupt_ = Interrupt::Deadline;
  beast::error_code ec;
  stream_.socket().cancel(ec);
}

// A claim is counted in n_shedding until the connection stops counting; one claimed after that (a race with the
// accept thread) is released here.
void Session::release_shed_claim() {
  if (!shed_claimed_.load() || shed_released_) return;
  shed_released_ = true;
  shared_->n_shedding.fetch_sub(1);
}

void Session::shed() {
  if (!counted_) release_shed_claim();
  if (state_ != State::ReadingHead) return;
  if (handshaking_) return close();
  // The head's read is pending: its handler answers (see on_deadline).
  deadline_.cancel();
  interrupt_ = Interrupt::Shed;
  beast::error_code ec;
  stream_.socket().cancel(ec);
}

void Session::dispatch_request() {
  auto msg = parser_->release();
  parser_.reset();
  HttpRequest req;
  req.method = std::string(msg.method_string());
  req.target = std::string(msg.target());
  req.path = req.target.substr(0, req.target.find('?'));
  // Beast appends a chunked body's trailer fields to the head's; they are dropped, never merged (RFC 9110 §6.5.1):
  // a proxy that vetted the head never saw them.
  size_t n_fields = 0;
  for (const auto& field : msg) {
    if (n_fields++ == n_head_fields_) break;
    std::string name(field.name_string());
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
    req.headers.emplace_back(std::move(name), std::string(field.value()));
  }
  req.body = std::move(msg.body());
  req.remote = remote_;
  head_only_ = req.method == "HEAD";

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
    if (!response_started_) sink_send(exchange_, shared_->format_error(500, "internal server error", ""));
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
  head_wait_since_ns_.store(0);
  uncount();
  deadline_.cancel();
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
  head_wait_since_ns_.store(0);
  deadline_.cancel();
  ++exchange_;  // any sink of an earlier request is now stale
  response_started_ = true;
  response_done_ = true;
  state_ = State::Handling;
  // The path, once the request line has been parsed (the parser is fresh for each request): a head refused after it,
  // for its framing or a Content-Length over the limit, is answered in the route's error shape.
  std::string path;
  if (parser_) {
    const std::string target(parser_->get().target());
    path = target.substr(0, target.find('?'));
  }
  HttpResponse resp = shared_->format_error(status, message, path);
  queue_write(format_head(resp.status, resp.content_type, resp.headers, resp.body.size()) + resp.body);
}

std::string Session::format_head(int status, const std::string& content_type, const HeaderList& headers,
                                 std::optional<size_t> content_length) const {
  std::string head = strprintf("HTTP/1.1 %d %s\r\nServer: kairo\r\n", status, http_status_text(status));
  if (!content_type.empty()) head += "Content-Type: " + content_type + "\r\n";
  if (status == 204 || status == 304) {
    // No body by definition, and no Content-Length either (RFC 9110 §8.6: a 304's would have to be the 200's).
  } else if (content_length) {
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
  std::string bytes = format_head(response.status, response.content_type, response.headers, response.body.size());
  if (!head_only_) bytes += response.body;
  queue_write(std::move(bytes));
}

void Session::sink_begin_stream(uint64_t exchange, int status, std::string content_type, HeaderList headers) {
  if (exchange != exchange_ || state_ == State::Closed || response_started_) return;
  response_started_ = true;
  state_ = State::Streaming;
  queue_write(format_head(status, content_type, headers, std::nullopt));
}

void Session::sink_write_chunk(uint64_t exchange, std::string data) {
  if (exchange != exchange_ || state_ != State::Streaming || response_done_ || data.empty() || head_only_) return;
  queue_write(strprintf("%zx\r\n", data.size()) + data + "\r\n");
}

void Session::sink_end_stream(uint64_t exchange) {
  if (exchange != exchange_ || state_ != State::Streaming || response_done_) return;
  response_done_ = true;
  if (shared_->shutting_down.load()) keep_alive_ = false;
  queue_write(head_only_ ? "" : "0\r\n\r\n");  // an empty write still completes the response
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
  ++n_answered_;
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
  head_wait_since_ns_.store(0);
  uncount();  // only input is drained from here on
  if (stream_.is_tls()) {
    // TLS ends with close_notify both ways; the peer's answer (or the deadline) ends the connection. A read still
    // posted (the disconnect monitor) may not overlap the shutdown's own read, so then the connection just closes.
    if (monitor_pending_) return close();
    stream_.expires_after(kLingerTime);
    stream_.async_shutdown([self = shared_from_this()](beast::error_code) { self->close(); });
    return;
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
