#pragma once
// A deliberately small blocking HTTP/1.1 client over raw sockets, so tests can send exactly the bytes they want
// (truncated heads, slow bodies, pipelining) and read exactly what the server wrote (status line, headers,
// chunked framing). Every read has a timeout, so a misbehaving server fails a test instead of hanging it.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kairo::server::testing {

struct HttpResult {
  int status = 0;
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;                            // de-chunked
  std::vector<std::string> chunks;             // chunk payloads, when chunked
  bool chunked = false;

  std::string header(const std::string& lower_name) const;
  nlohmann::json json() const;
  // SSE: the payloads of the `data:` events, in order.
  std::vector<std::string> sse_data() const;
};

class Connection {
 public:
  explicit Connection(int port, int timeout_ms = 10000);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  bool ok() const { return fd_ >= 0; }
  bool send(const std::string& bytes);
  // Reads one response; nullopt if the connection closed or timed out first.
  std::optional<HttpResult> read_response();
  // Reads one response head (an interim 100 Continue included); then read_chunk() for a chunked body, one chunk at
  // a time (nullopt at the end / on error).
  std::optional<HttpResult> read_head();
  std::optional<std::string> read_chunk();
  // True when the server closed the connection (read returns 0 or reset) within timeout_ms.
  bool wait_closed(int timeout_ms);
  void close();

 private:
  bool fill();  // reads more bytes into buf_; false on close/timeout/error
  std::optional<std::string> read_line();
  bool read_exact(size_t n, std::string& out);

  int fd_ = -1;
  std::string buf_;
};

// Formats a request: method, path, body (Content-Length set), extra header lines ("Name: value").
std::string format_request(const std::string& method, const std::string& path, const std::string& body = "",
                           const std::vector<std::string>& headers = {});

// One request on a fresh connection.
HttpResult request(int port, const std::string& method, const std::string& path, const std::string& body = "",
                   const std::vector<std::string>& headers = {});
inline HttpResult post_json(int port, const std::string& path, const nlohmann::json& body,
                            const std::vector<std::string>& headers = {}) {
  return request(port, "POST", path, body.dump(), headers);
}

}  // namespace kairo::server::testing
