#include "fake_openai_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>

namespace kairo::bench::testing {
namespace {

bool send_all(int fd, const std::string& s) {
  size_t done = 0;
  while (done < s.size()) {
    const ssize_t n = ::send(fd, s.data() + done, s.size() - done, MSG_NOSIGNAL);
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

// Reads one HTTP request (headers + Content-Length body). Returns false on EOF/garbage.
bool read_request(int fd, std::string& method, std::string& target, std::string& body, std::string& authorization) {
  std::string data;
  char buf[4096];
  size_t header_end = std::string::npos;
  while ((header_end = data.find("\r\n\r\n")) == std::string::npos) {
    const ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) return false;
    data.append(buf, static_cast<size_t>(n));
  }
  const std::string head = data.substr(0, header_end);
  const size_t sp1 = head.find(' '), sp2 = head.find(' ', sp1 + 1);
  method = head.substr(0, sp1);
  target = head.substr(sp1 + 1, sp2 - sp1 - 1);
  size_t length = 0;
  std::string lower;
  for (char c : head) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const size_t cl = lower.find("content-length:");
  if (cl != std::string::npos) length = std::stoul(head.substr(cl + 15));
  const size_t auth = lower.find("\r\nauthorization:");
  if (auth != std::string::npos) {
    const size_t from = head.find_first_not_of(' ', auth + 16);
    authorization = head.substr(from, head.find("\r\n", from) - from);
  }
  body = data.substr(header_end + 4);
  while (body.size() < length) {
    const ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) return false;
    body.append(buf, static_cast<size_t>(n));
  }
  return true;
}

}  // namespace

FakeOpenAiServer::FakeOpenAiServer(FakeServerOptions options) : options_(options) {
  listen_fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
  int one = 1;
  ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  ::listen(listen_fd_, 64);
  socklen_t len = sizeof(addr);
  ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
  port_ = ntohs(addr.sin_port);
  acceptor_ = std::thread([this] {
    while (!stop_.load()) {
      pollfd p{listen_fd_, POLLIN, 0};
      if (::poll(&p, 1, 20) <= 0) continue;
      const int fd = ::accept(listen_fd_, nullptr, nullptr);
      if (fd < 0) continue;
      // Without TCP_NODELAY, Nagle's algorithm holds each small chunk until the previous one is acknowledged and
      // the client's delayed ACK (40 ms) bunches the stream: a streaming server must set it.
      int one = 1;
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
      std::lock_guard<std::mutex> lock(mutex_);
      workers_.emplace_back([this, fd] { serve(fd); });
    }
  });
}

FakeOpenAiServer::~FakeOpenAiServer() {
  stop_.store(true);
  acceptor_.join();
  for (auto& w : workers_) w.join();
  ::close(listen_fd_);
}

std::vector<nlohmann::json> FakeOpenAiServer::bodies() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return bodies_;
}

std::vector<std::string> FakeOpenAiServer::targets() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return targets_;
}

std::vector<std::string> FakeOpenAiServer::authorizations() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return authorizations_;
}

void FakeOpenAiServer::serve(int fd) {
  std::string method, target, body, authorization;
  if (!read_request(fd, method, target, body, authorization)) {
    ::close(fd);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    targets_.push_back(target);
  }
  if (method == "GET" && target == "/v1/models") {
    const std::string json = R"({"object":"list","data":[{"id":"fake-model","object":"model"}]})";
    send_all(fd, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " +
                     std::to_string(json.size()) + "\r\nConnection: close\r\n\r\n" + json);
    ::close(fd);
    return;
  }
  if (method == "GET" && target == "/metrics") {  // vLLM names under the "vllm:" prefix
    const int n = finished_.load();
    const std::string text = "# TYPE vllm:time_to_first_token_seconds histogram\n"
                             "vllm:time_to_first_token_seconds_sum{model_name=\"fake-model\"} " +
                             std::to_string(0.01 * n) + "\nvllm:time_to_first_token_seconds_count " + std::to_string(n) +
                             "\nvllm:e2e_request_latency_seconds_sum " + std::to_string(0.02 * n) +
                             "\nvllm:e2e_request_latency_seconds_count " + std::to_string(n) + "\n";
    send_all(fd, "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: " + std::to_string(text.size()) +
                     "\r\nConnection: close\r\n\r\n" + text);
    ::close(fd);
    return;
  }
  const nlohmann::json req = nlohmann::json::parse(body, nullptr, false);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    bodies_.push_back(req);
    authorizations_.push_back(authorization);
  }
  const int now = in_flight_.fetch_add(1) + 1;
  int seen = max_in_flight_.load();
  while (now > seen && !max_in_flight_.compare_exchange_weak(seen, now)) {
  }
  if (options_.fail_status != 0) {
    const std::string json = R"({"error":{"message":"fake failure","type":"invalid_request_error"}})";
    send_all(fd, "HTTP/1.1 " + std::to_string(options_.fail_status) +
                     " Bad Request\r\nContent-Type: application/json\r\nContent-Length: " +
                     std::to_string(json.size()) + "\r\nConnection: close\r\n\r\n" + json);
    in_flight_.fetch_sub(1);
    ::close(fd);
    return;
  }
  const bool chat = target.find("chat") != std::string::npos;
  const int n = req.is_object() && req.contains("max_tokens") ? req["max_tokens"].get<int>() : 16;
  std::string head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n";
  head += options_.chunked ? "Transfer-Encoding: chunked\r\n\r\n" : "Connection: close\r\n\r\n";
  send_all(fd, head);
  auto emit = [&](const std::string& event) {
    if (!options_.chunked) return send_all(fd, event);
    char size[32];
    std::snprintf(size, sizeof(size), "%zx\r\n", event.size());
    return send_all(fd, size + event + "\r\n");
  };
  for (int i = 0; i < n; ++i) {
    std::this_thread::sleep_for(i == 0 ? options_.first_delay : options_.gap);
    const std::string text = "tok" + std::to_string(i) + " ";
    nlohmann::json chunk;
    if (chat) {
      chunk = {{"object", "chat.completion.chunk"}, {"choices", {{{"index", 0}, {"delta", {{"content", text}}}}}}};
    } else {
      chunk = {{"object", "text_completion"}, {"choices", {{{"index", 0}, {"text", text}}}}};
    }
    if (!emit("data: " + chunk.dump() + "\n\n")) break;
  }
  const nlohmann::json usage = {{"choices", nlohmann::json::array()},
                                {"usage", {{"prompt_tokens", options_.prompt_tokens}, {"completion_tokens", n}}}};
  finished_.fetch_add(1);  // before the client can see the end, as a real server records its metrics
  emit(": keep-alive comment\n\ndata: " + usage.dump() + "\n\ndata: [DONE]\n\n");
  if (options_.chunked) send_all(fd, "0\r\n\r\n");
  in_flight_.fetch_sub(1);
  ::shutdown(fd, SHUT_WR);
  ::close(fd);
}

}  // namespace kairo::bench::testing
