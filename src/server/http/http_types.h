#pragma once
// The HTTP layer's contract with the routes: a parsed request in, and a sink that takes either one complete
// response or a chunked stream. No Beast type crosses this line, so routes and the OpenAI layer compile and test
// without the network library.
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace kairo::server {

using HeaderList = std::vector<std::pair<std::string, std::string>>;

struct HttpRequest {
  std::string method;   // "GET", "POST", ...
  std::string target;   // as sent: path and query
  std::string path;     // target without the query
  HeaderList headers;   // names lower-cased
  std::string body;
  std::string remote;   // "ip:port" of the peer

  // First header with this (lower-case) name, or "" when absent.
  const std::string& header(const std::string& lower_name) const;
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  HeaderList headers;   // extra headers (Retry-After, X-Request-Id, CORS, ...)
};

// Where a route writes its answer. send/begin_stream/write_chunk/end_stream and the disconnect callback all run on
// the exchange's executor (the connection's strand); post() is the only thread-safe method: use it to get there
// from another thread (the engine's callbacks).
class ResponseSink {
 public:
  virtual ~ResponseSink() = default;
  // Runs fn on this exchange's executor. Safe from any thread; fn may run after the client left (check connected()).
  virtual void post(std::function<void()> fn) = 0;
  // One complete response. Exactly one of send() or begin_stream() per request.
  virtual void send(HttpResponse response) = 0;
  // Starts a chunked response (headers go out now); content_type e.g. "text/event-stream".
  virtual void begin_stream(int status, std::string content_type, HeaderList headers) = 0;
  virtual void write_chunk(std::string data) = 0;
  virtual void end_stream() = 0;
  // Called once, on the executor, if the client goes away before the response is complete.
  virtual void on_disconnect(std::function<void()> fn) = 0;
  virtual bool connected() const = 0;
};

using HttpHandler = std::function<void(HttpRequest request, std::shared_ptr<ResponseSink> sink)>;

}  // namespace kairo::server
