#include "bench/serve/http_client.h"

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <limits>

#include "core/format.h"

namespace kairo::bench::serve {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;

Result<Url> parse_url(const std::string& url) {
  const std::string scheme = "http://";
  if (url.rfind("https://", 0) == 0) {
    return Error{strprintf("%s: https is not supported; point --url at the server's plain http port",
                           quote_for_error(url).c_str())};
  }
  if (url.rfind(scheme, 0) != 0) {
    return Error{strprintf("%s: expected a URL like http://127.0.0.1:8080", quote_for_error(url).c_str())};
  }
  const std::string rest = url.substr(scheme.size());
  const size_t slash = rest.find('/');
  const std::string authority = rest.substr(0, slash);
  Url u;
  u.base_path = slash == std::string::npos ? "" : rest.substr(slash);
  while (!u.base_path.empty() && u.base_path.back() == '/') u.base_path.pop_back();
  const size_t colon = authority.rfind(':');
  if (colon != std::string::npos && authority.find(']') == std::string::npos) {
    u.host = authority.substr(0, colon);
    u.port = authority.substr(colon + 1);
  } else {
    u.host = authority;
    u.port = "80";
  }
  if (!u.host.empty() && u.host.front() == '[' && u.host.back() == ']') u.host = u.host.substr(1, u.host.size() - 2);
  if (u.host.empty() || u.port.empty() || u.port.find_first_not_of("0123456789") != std::string::npos) {
    return Error{strprintf("%s: expected a URL like http://127.0.0.1:8080", quote_for_error(url).c_str())};
  }
  return u;
}

std::string endpoint_path(const Url& url, const std::string& endpoint) {
  const bool has_v1 = url.base_path.size() >= 3 && url.base_path.compare(url.base_path.size() - 3, 3, "/v1") == 0;
  return url.base_path + (has_v1 ? "" : "/v1") + "/" + endpoint;
}

net::awaitable<void> http_stream(const Url& url, const HttpExchange& ex, std::function<void(std::string_view)> on_body,
                                 HttpOutcome& out) {
  auto executor = co_await net::this_coro::executor;
  beast::error_code ec;
  auto token = net::redirect_error(net::use_awaitable, ec);
  tcp::resolver resolver(executor);
  beast::tcp_stream stream(executor);
  // One deadline for the whole exchange: it covers every read and write started after it is set.
  stream.expires_after(ex.timeout);
  auto fail = [&](const char* what) { out.error = std::string(what) + ": " + ec.message(); };

  const auto endpoints = co_await resolver.async_resolve(url.host, url.port, token);
  if (ec) { fail("resolve"); co_return; }
  co_await stream.async_connect(endpoints, token);
  if (ec) { fail("connect"); co_return; }

  http::request<http::string_body> req{ex.method == "GET" ? http::verb::get : http::verb::post, ex.target, 11};
  req.set(http::field::host, url.host + ":" + url.port);
  req.set(http::field::user_agent, "kairo-bench-serve");
  if (ex.method != "GET") {
    req.set(http::field::content_type, "application/json");
    req.set(http::field::accept, "text/event-stream, application/json");
    req.body() = ex.body;
  }
  for (const auto& [k, v] : ex.headers) req.set(k, v);
  req.prepare_payload();
  co_await http::async_write(stream, req, token);
  if (ec) { fail("write"); co_return; }

  beast::flat_buffer buffer;
  http::response_parser<http::buffer_body> parser;
  parser.body_limit(std::numeric_limits<std::uint64_t>::max());
  co_await http::async_read_header(stream, buffer, parser, token);
  if (ec) { fail("read header"); co_return; }
  out.status = parser.get().result_int();
  char chunk[16384];
  while (!parser.is_done()) {
    parser.get().body().data = chunk;
    parser.get().body().size = sizeof(chunk);
    // read_some returns as soon as any body bytes are parsed; async_read would wait to fill `chunk` and bunch
    // the tokens together.
    co_await http::async_read_some(stream, buffer, parser, token);
    if (ec == http::error::need_buffer) ec = {};
    if (ec) { fail("read body"); co_return; }
    const size_t n = sizeof(chunk) - parser.get().body().size;
    if (n > 0) on_body(std::string_view(chunk, n));
  }
  beast::error_code ignored;
  stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
}

}  // namespace kairo::bench::serve
