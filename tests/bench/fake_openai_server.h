#pragma once
// A tiny OpenAI-style streaming server for the load-generator tests: every completion streams exactly max_tokens
// text chunks ("tok0 ", "tok1 ", ...), the first after `first_delay`, the others `gap` apart, then a usage chunk and
// [DONE]. It records what it was sent and how many requests were in flight at once.
#include <atomic>
#include <chrono>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

namespace kairo::bench::testing {

struct FakeServerOptions {
  std::chrono::milliseconds first_delay{30};
  std::chrono::milliseconds gap{5};
  bool chunked = true;            // Transfer-Encoding: chunked; otherwise the body ends when the connection closes
  int fail_status = 0;            // non-zero: answer every completion with this status and an OpenAI error body
  int prompt_tokens = 7;          // reported in usage
};

class FakeOpenAiServer {
 public:
  explicit FakeOpenAiServer(FakeServerOptions options);
  ~FakeOpenAiServer();

  int port() const { return port_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  std::vector<nlohmann::json> bodies() const;    // completion request bodies, in arrival order
  std::vector<std::string> targets() const;      // request paths, in arrival order
  std::vector<std::string> authorizations() const;  // each completion's Authorization header ("" when none)
  int max_in_flight() const { return max_in_flight_.load(); }

 private:
  void serve(int fd);

  FakeServerOptions options_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::thread acceptor_;
  std::atomic<bool> stop_{false};
  std::atomic<int> in_flight_{0};
  std::atomic<int> max_in_flight_{0};
  std::atomic<int> finished_{0};  // served completions, for GET /metrics (each counted as TTFT 10 ms, E2E 20 ms)
  mutable std::mutex mutex_;
  std::vector<std::thread> workers_;
  std::vector<nlohmann::json> bodies_;
  std::vector<std::string> targets_;
  std::vector<std::string> authorizations_;
};

}  // namespace kairo::bench::testing
