#include "http_client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>

namespace kairo::server::testing {

std::string HttpResult::header(const std::string& lower_name) const {
  auto it = headers.find(lower_name);
  return it == headers.end() ? "" : it->second;
}

nlohmann::json HttpResult::json() const { return nlohmann::json::parse(body); }

std::vector<std::string> HttpResult::sse_data() const {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos < body.size()) {
    const size_t end = body.find("\n\n", pos);
    if (end == std::string::npos) break;
    const std::string event = body.substr(pos, end - pos);
    if (event.rfind("data: ", 0) == 0) out.push_back(event.substr(6));
    pos = end + 2;
  }
  return out;
}

Connection::Connection(int port, int timeout_ms) {
  fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd_ < 0) return;
  timeval tv{timeout_ms / 1000, (timeout_ms % 1000) * 1000};
  setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  int one = 1;
  setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) close();
}

Connection::~Connection() { close(); }

void Connection::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

bool Connection::send(const std::string& bytes) {
  size_t sent = 0;
  while (fd_ >= 0 && sent < bytes.size()) {
    const ssize_t n = ::send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) return false;
    sent += static_cast<size_t>(n);
  }
  return fd_ >= 0;
}

bool Connection::fill() {
  if (fd_ < 0) return false;
  char tmp[16384];
  const ssize_t n = ::recv(fd_, tmp, sizeof tmp, 0);
  if (n <= 0) return false;
  buf_.append(tmp, static_cast<size_t>(n));
  return true;
}

std::optional<std::string> Connection::read_line() {
  while (true) {
    const size_t pos = buf_.find("\r\n");
    if (pos != std::string::npos) {
      std::string line = buf_.substr(0, pos);
      buf_.erase(0, pos + 2);
      return line;
    }
    if (!fill()) return std::nullopt;
  }
}

bool Connection::read_exact(size_t n, std::string& out) {
  while (buf_.size() < n) {
    if (!fill()) return false;
  }
  out = buf_.substr(0, n);
  buf_.erase(0, n);
  return true;
}

std::optional<HttpResult> Connection::read_head() {
  HttpResult r;
  auto status_line = read_line();
  if (!status_line || status_line->size() < 12) return std::nullopt;
  r.status = std::stoi(status_line->substr(9, 3));
  while (true) {
    auto line = read_line();
    if (!line) return std::nullopt;
    if (line->empty()) break;
    const size_t colon = line->find(':');
    if (colon == std::string::npos) continue;
    std::string name = line->substr(0, colon);
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
    std::string value = line->substr(colon + 1);
    value.erase(0, value.find_first_not_of(' '));
    r.headers[name] = value;
  }
  r.chunked = r.header("transfer-encoding") == "chunked";
  return r;
}

std::optional<std::string> Connection::read_chunk() {
  auto size_line = read_line();
  if (!size_line) return std::nullopt;
  const size_t size = std::stoul(*size_line, nullptr, 16);
  std::string data;
  if (!read_exact(size, data)) return std::nullopt;
  auto crlf = read_line();
  if (!crlf || !crlf->empty()) return std::nullopt;
  if (size == 0) return std::nullopt;
  return data;
}

std::optional<HttpResult> Connection::read_response() {
  auto r = read_head();
  while (r && r->status == 100) r = read_head();  // interim 100 Continue
  if (!r) return std::nullopt;
  if (r->chunked) {
    while (true) {
      auto size_line = read_line();
      if (!size_line) return std::nullopt;
      const size_t size = std::stoul(*size_line, nullptr, 16);
      std::string data;
      if (!read_exact(size, data)) return std::nullopt;
      read_line();
      if (size == 0) break;
      r->body += data;
      r->chunks.push_back(std::move(data));
    }
  } else {
    const std::string cl = r->header("content-length");
    const size_t n = cl.empty() ? 0 : std::stoul(cl);
    if (!read_exact(n, r->body)) return std::nullopt;
  }
  return r;
}

bool Connection::wait_closed(int timeout_ms) {
  if (fd_ < 0) return true;
  pollfd p{fd_, POLLIN, 0};
  const int ready = ::poll(&p, 1, timeout_ms);
  if (ready <= 0) return false;
  char tmp[4096];
  while (true) {
    const ssize_t n = ::recv(fd_, tmp, sizeof tmp, MSG_DONTWAIT);
    if (n == 0) return true;
    if (n < 0) return errno != EAGAIN && errno != EWOULDBLOCK;
    buf_.append(tmp, static_cast<size_t>(n));
    if (::poll(&p, 1, timeout_ms) <= 0) return false;
  }
}

std::string format_request(const std::string& method, const std::string& path, const std::string& body,
                           const std::vector<std::string>& headers) {
  std::string req = method + " " + path + " HTTP/1.1\r\nHost: localhost\r\n";
  for (const auto& h : headers) req += h + "\r\n";
  if (!body.empty() || method == "POST") {
    req += "Content-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) + "\r\n";
  }
  req += "\r\n" + body;
  return req;
}

HttpResult request(int port, const std::string& method, const std::string& path, const std::string& body,
                   const std::vector<std::string>& headers) {
  Connection c(port);
  if (!c.ok() || !c.send(format_request(method, path, body, headers))) return {};
  auto r = c.read_response();
  return r ? *r : HttpResult{};
}

}  // namespace kairo::server::testing
