#pragma once
// A minimal HTTP/1.1 client for the load generator, on Boost.Beast with C++20 coroutines: one connection per
// request (as the serving benchmarks of vLLM and SGLang do by default), the response body handed over as it
// arrives so streamed tokens are timestamped when they reach the socket, and one deadline per request.
// Boost 1.74's awaitable.hpp uses std::exchange without including <utility>.
#include <utility>

#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace kairo::bench::serve {

struct Url {
  std::string host;
  std::string port;
  std::string base_path;  // without a trailing '/': "" for "http://h:p", "/v1" for "http://h:p/v1/"
};

// Parses "http://host[:port][/path]" (port defaults to 80). https is refused with a message.
Result<Url> parse_url(const std::string& url);

// The path of an OpenAI endpoint under the URL: "/v1/completions" for base "" or "/v1".
std::string endpoint_path(const Url& url, const std::string& endpoint);

struct HttpExchange {
  std::string method = "POST";
  std::string target;                              // path
  std::string body;                                // JSON request
  std::vector<std::pair<std::string, std::string>> headers;
  std::chrono::steady_clock::duration timeout = std::chrono::seconds(600);
};

struct HttpOutcome {
  int status = 0;          // 0 when no response arrived
  std::string error;       // transport error (connect, timeout, reset); empty on success
};

// Sends the request and calls on_body with each piece of the response body as it arrives.
boost::asio::awaitable<void> http_stream(const Url& url, const HttpExchange& exchange,
                                         std::function<void(std::string_view)> on_body, HttpOutcome& outcome);

}  // namespace kairo::bench::serve
