#pragma once
// HTTP/1.1 server on Boost.Beast/Asio: a few threads run every connection asynchronously (no thread per
// connection), each connection on its own strand. It enforces the transport limits (head/body size, head/body/write
// timeouts against slow clients, connection count), keeps connections alive, streams chunked responses, and tells
// the route when a client leaves mid-request (a read stays posted while the request is handled, so a non-streaming
// generation learns of the disconnect too).
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "core/result.h"
#include "server/http/http_types.h"
#include "server/server_config.h"

namespace boost::asio::ssl {
class context;
}

namespace kairo::server {

// Builds the body of a transport-level error (413, 431, 400 bad HTTP, 503 too many connections) so it has the same
// shape as the routes' errors. `path` is the request's path once its request line has been parsed (framing refusals,
// a body too large or too slow), empty before.
using TransportErrorFormatter =
    std::function<HttpResponse(int status, const std::string& message, const std::string& path)>;

struct HttpServerOptions {
  HttpLimits http;
  uint64_t max_body_bytes = 8u << 20;
  uint32_t max_header_bytes = 16u << 10;
  std::shared_ptr<boost::asio::ssl::context> tls;  // set: every connection speaks TLS (tls_context.h)
};

class HttpServer {
 public:
  HttpServer(HttpServerOptions options, HttpHandler handler, TransportErrorFormatter format_error);
  ~HttpServer();  // stop()s
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds and listens; port 0 picks a free port. Errors say which address could not be used and why.
  Status listen(const std::string& host, int port);
  // Runs the accept loop and all connections on n_threads threads.
  void start(int n_threads);
  int port() const;

  // Graceful shutdown, step 1: no new connections; idle keep-alive connections close; connections with a request
  // in flight answer it with `Connection: close`.
  void stop_accepting();
  // Step 2: closes every connection now (their routes see a disconnect).
  void close_all();
  // Step 3: stops the threads. Idempotent.
  void stop();

  int n_connections() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The reason phrase for a status line ("Not Found").
const char* http_status_text(int status);

}  // namespace kairo::server
