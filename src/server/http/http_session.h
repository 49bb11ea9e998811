#pragma once
// One client connection (internal to the HTTP layer). Reads each request head until its blank line, checks its
// framing (request_framing.h), parses it with Beast under the size limits and deadlines, hands the request to the
// handler with a ResponseSink, and writes responses it formats itself: a complete one with Content-Length, or a
// chunked stream (HEAD: the same head, no body). Everything runs on the connection's strand.
#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>

#include "server/http/connection_stream.h"
#include "server/http/http_server.h"
#include "server/http/http_types.h"
#include "server/http/request_framing.h"

namespace kairo::server::http_detail {

namespace net = boost::asio;
namespace beast = boost::beast;

class Session;

// State every session shares with the server.
struct SharedState {
  // First member, so destroyed last; sessions keep SharedState (and so the context) alive while a route still holds
  // their sink, e.g. an engine callback that fires after the server stopped.
  net::io_context ioc;
  HttpServerOptions options;
  HttpHandler handler;
  TransportErrorFormatter format_error;
  std::atomic<bool> shutting_down{false};
  std::atomic<int> n_connections{0};
  std::atomic<int> n_shedding{0};  // of n_connections, those claimed for shedding and not closed yet

  std::mutex mutex;
  bool stopped = false;  // under mutex: posts are dropped once the threads are gone (nothing would run them)
  uint64_t next_session_id = 1;
  std::unordered_map<uint64_t, std::weak_ptr<Session>> sessions;  // for stop_accepting()/close_all()/shedding
  std::unordered_map<std::string, int> connections_per_address;   // counted like n_connections
};

class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(net::ip::tcp::socket socket, std::shared_ptr<SharedState> shared);
  ~Session();

  void start();                   // begins reading requests
  void reject(int status, const std::string& message);  // answers once (503 when full) and closes
  // When the connection table is full, the connection that has waited longest for a complete request head makes
  // room: claim_for_shedding() (any thread) picks it once, shed() (on its strand) answers 408 and closes.
  int64_t head_wait_since_ns() const { return head_wait_since_ns_.load(); }  // 0 = not waiting for a head
  bool claim_for_shedding() {
    if (shed_claimed_.exchange(true)) return false;
    shared_->n_shedding.fetch_add(1);
    return true;
  }
  bool shedding() const { return shed_claimed_.load(); }
  void shed();
  const std::string& address() const { return address_; }
  void close_if_idle();           // shutdown: a connection waiting for its next request closes now
  void close();                   // closes now; an unfinished response's route sees a disconnect

  // The ResponseSink operations, on the strand, for the request numbered `exchange`.
  void sink_send(uint64_t exchange, HttpResponse response);
  void sink_begin_stream(uint64_t exchange, int status, std::string content_type, HeaderList headers);
  void sink_write_chunk(uint64_t exchange, std::string data);
  void sink_end_stream(uint64_t exchange);
  void sink_on_disconnect(uint64_t exchange, std::function<void()> fn);
  bool sink_connected(uint64_t exchange) const;
  net::any_io_executor executor() { return stream_.get_executor(); }

 private:
  enum class State { ReadingHead, ReadingBody, Handling, Streaming, Lingering, Closed };

  void after_handshake(std::function<void()> then);
  void read_head();
  void continue_head();
  void on_head_bytes(beast::error_code ec, size_t n);
  void on_head_parsed();
  void read_body();
  void arm_deadline(double seconds);
  void on_deadline();
  void uncount();
  void release_shed_claim();
  void on_body(beast::error_code ec);
  void dispatch_request();
  void start_monitor();
  void on_monitor(beast::error_code ec, size_t n);
  void fail_transport(int status, const std::string& message);
  void queue_write(std::string bytes);
  void do_write();
  void on_write(beast::error_code ec);
  void finish_response();
  void next_request();
  void handle_disconnect();
  void lingering_close();
  void on_linger(beast::error_code ec, size_t n);
  std::string format_head(int status, const std::string& content_type, const HeaderList& headers,
                          std::optional<size_t> content_length) const;

  // Declared before the stream so it is destroyed after it: when a route's sink outlives the server, this session
  // holds the last reference to the shared state, and the stream's timer must be torn down while its io_context
  // still exists.
  std::shared_ptr<SharedState> shared_;
  ConnectionStream stream_;
  uint64_t id_ = 0;
  std::string remote_;
  std::string address_;           // remote_ without the port: the per-client connection count's key
  beast::flat_buffer buffer_;
  RequestHeadScanner scanner_;
  std::optional<beast::http::request_parser<beast::http::string_body>> parser_;
  // Reading a head or a body has a deadline of its own (not the stream's timeout, which would close the socket
  // before a 408 could be written).
  net::steady_timer deadline_;
  enum class Interrupt { None, Deadline, Shed };
  Interrupt interrupt_ = Interrupt::None;  // why the pending read was cancelled
  std::atomic<int64_t> head_wait_since_ns_{0};
  std::atomic<bool> shed_claimed_{false};
  bool shed_released_ = false;    // its claim no longer counts in SharedState::n_shedding
  uint64_t n_answered_ = 0;       // requests answered on this connection
  size_t n_head_fields_ = 0;       // the head's fields; any after them are a chunked body's trailer
  bool head_only_ = false;
  bool handshaking_ = false;      // TLS: the handshake is in progress (nothing may be written)        // the request is HEAD: the response's head is written, its body is not

  State state_ = State::ReadingHead;
  uint64_t exchange_ = 0;         // number of the request being answered; stale sinks are ignored
  bool keep_alive_ = true;
  bool response_started_ = false;
  bool response_done_ = false;    // all of the response is queued
  bool closing_after_write_ = false;
  std::function<void()> on_disconnect_;

  std::deque<std::string> write_queue_;
  std::string write_buf_;
  bool writing_ = false;

  size_t n_lingered_ = 0;
  bool counted_ = true;           // still counted in SharedState::n_connections
  bool monitor_pending_ = false;
  bool resume_after_monitor_ = false;
};

}  // namespace kairo::server::http_detail
