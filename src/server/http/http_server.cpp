#include "server/http/http_server.h"

#include <chrono>
#include <condition_variable>
#include <optional>
#include <thread>
#include <vector>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>

#include "core/format.h"
#include "server/http/http_session.h"

namespace kairo::server {

using http_detail::Session;
using http_detail::SharedState;
namespace net = boost::asio;
using tcp = net::ip::tcp;

struct HttpServer::Impl {
  std::shared_ptr<SharedState> shared = std::make_shared<SharedState>();
  std::optional<net::executor_work_guard<net::io_context::executor_type>> work;
  std::optional<tcp::acceptor> acceptor;
  std::optional<net::steady_timer> retry_timer;
  std::vector<std::thread> threads;
  int port = 0;
  bool stopped = false;

  std::mutex run_mutex;
  std::condition_variable run_cv;
  int n_running = 0;

  void do_accept() {
    acceptor->async_accept(net::make_strand(shared->ioc), [this](boost::system::error_code ec, tcp::socket socket) {
      if (!acceptor->is_open()) return;
      if (ec) {
        // Out of file descriptors and the like: back off briefly instead of spinning.
        retry_timer->expires_after(std::chrono::milliseconds(50));
        retry_timer->async_wait([this](boost::system::error_code wec) {
          if (!wec && acceptor->is_open()) do_accept();
        });
        return;
      }
      // SSE chunks are small: without TCP_NODELAY, Nagle holds them back and bunches tokens (TTFT/ITL suffer).
      boost::system::error_code nodelay_ec;
      socket.set_option(tcp::no_delay(true), nodelay_ec);
      auto session = std::make_shared<Session>(std::move(socket), shared);
      const auto& limits = shared->options.http;
      if (limits.max_connections_per_client > 0 &&
          connections_of(session->address()) > limits.max_connections_per_client) {
        session->reject(429, strprintf("this client already has %d connections open, the most one address may "
                                       "have; reuse them (keep-alive) or close some (the server's "
                                       "--max-connections-per-client, 0 for no cap)",
                                       limits.max_connections_per_client));
      } else if (shared->n_connections.load() > limits.max_connections + shared->n_shedding.load()) {
        if (auto victim = slowest_head()) {
          // Slow or idle heads make room for a client that may complete its request (slowloris from many
          // addresses); requests already being answered are never cut.
          net::post(victim->executor(), [victim] { victim->shed(); });
          session->start();
        } else {
          session->reject(503, strprintf("the server has reached its limit of %d connections; retry later "
                                         "(the server's --max-connections)",
                                         limits.max_connections));
        }
      } else {
        session->start();
      }
      do_accept();
    });
  }

  int connections_of(const std::string& address) {
    std::lock_guard lock(shared->mutex);
    auto it = shared->connections_per_address.find(address);
    return it == shared->connections_per_address.end() ? 0 : it->second;
  }

  // The connection that has waited longest for a complete request head and is not already being shed; claimed so
  // that the next accept picks another.
  std::shared_ptr<Session> slowest_head() {
    std::shared_ptr<Session> best;
    int64_t best_since = 0;
    for (auto& s : live_sessions()) {
      const int64_t since = s->head_wait_since_ns();
      if (since != 0 && !s->shedding() && (!best || since < best_since)) {
        best = s;
        best_since = since;
      }
    }
    if (best && !best->claim_for_shedding()) return nullptr;
    return best;
  }

  std::vector<std::shared_ptr<Session>> live_sessions() {
    std::vector<std::shared_ptr<Session>> out;
    std::lock_guard lock(shared->mutex);
    for (auto& [id, weak] : shared->sessions) {
      if (auto s = weak.lock()) out.push_back(std::move(s));
    }
    return out;
  }
};

HttpServer::HttpServer(HttpServerOptions options, HttpHandler handler, TransportErrorFormatter format_error)
    : impl_(std::make_unique<Impl>()) {
  impl_->shared->options = options;
  impl_->shared->handler = std::move(handler);
  impl_->shared->format_error = std::move(format_error);
  impl_->acceptor.emplace(net::make_strand(impl_->shared->ioc));
  impl_->retry_timer.emplace(impl_->acceptor->get_executor());
}

HttpServer::~HttpServer() { stop(); }

Status HttpServer::listen(const std::string& host, int port) {
  boost::system::error_code ec;
  tcp::resolver resolver(impl_->shared->ioc);
  auto results = resolver.resolve(host, std::to_string(port), tcp::resolver::passive, ec);
  if (ec || results.empty()) {
    return Error{strprintf("cannot resolve the listen address %s: %s", host.c_str(), ec.message().c_str())};
  }
  const tcp::endpoint endpoint = results.begin()->endpoint();
  auto& acc = *impl_->acceptor;
  acc.open(endpoint.protocol(), ec);
  if (!ec) acc.set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) acc.bind(endpoint, ec);
  if (!ec) acc.listen(net::socket_base::max_listen_connections, ec);
  if (ec) {
    boost::system::error_code ignored;
    acc.close(ignored);
    return Error{strprintf("cannot listen on %s:%d: %s (is another server using the port? choose one with --port)",
                           host.c_str(), port, ec.message().c_str())};
  }
  impl_->port = acc.local_endpoint(ec).port();
  return Status::success();
}

void HttpServer::start(int n_threads) {
  impl_->work.emplace(impl_->shared->ioc.get_executor());
  net::post(impl_->acceptor->get_executor(), [impl = impl_.get()] { impl->do_accept(); });
  for (int i = 0; i < std::max(1, n_threads); ++i) {
    {
      std::lock_guard lock(impl_->run_mutex);
      ++impl_->n_running;
    }
    impl_->threads.emplace_back([impl = impl_.get()] {
      impl->shared->ioc.run();
      std::lock_guard lock(impl->run_mutex);
      --impl->n_running;
      impl->run_cv.notify_all();
    });
  }
}

int HttpServer::port() const { return impl_->port; }

int HttpServer::n_connections() const { return impl_->shared->n_connections.load(); }

void HttpServer::stop_accepting() {
  impl_->shared->shutting_down.store(true);
  net::post(impl_->acceptor->get_executor(), [impl = impl_.get()] {
    boost::system::error_code ec;
    impl->acceptor->close(ec);
    impl->retry_timer->cancel();
  });
  for (auto& s : impl_->live_sessions()) {
    net::post(s->executor(), [s] { s->close_if_idle(); });
  }
}

void HttpServer::close_all() {
  for (auto& s : impl_->live_sessions()) {
    net::post(s->executor(), [s] { s->close(); });
  }
}

void HttpServer::stop() {
  if (impl_->stopped) return;
  impl_->stopped = true;
  if (impl_->threads.empty()) {
    boost::system::error_code ec;
    impl_->acceptor->close(ec);
    return;
  }
  {
    // From here, posts from other threads (engine callbacks) are dropped: the connections are being closed anyway,
    // and a handler queued after the threads end would never run.
    std::lock_guard lock(impl_->shared->mutex);
    impl_->shared->stopped = true;
  }
  stop_accepting();
  close_all();
  // With no work guard, run() returns once the last connection's handlers have run: nothing is left queued that
  // would keep a session (and its context) alive. A deadline guards against a handler that keeps re-arming.
  impl_->work.reset();
  {
    std::unique_lock lock(impl_->run_mutex);
    if (!impl_->run_cv.wait_for(lock, std::chrono::seconds(5), [&] { return impl_->n_running == 0; })) {
      impl_->shared->ioc.stop();
    }
  }
  for (auto& t : impl_->threads) t.join();
  impl_->threads.clear();
}

const char* http_status_text(int status) {
  switch (status) {
    case 100: return "Continue";
    case 200: return "OK";
    case 204: return "No Content";
    case 304: return "Not Modified";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 413: return "Payload Too Large";
    case 415: return "Unsupported Media Type";
    case 422: return "Unprocessable Entity";
    case 429: return "Too Many Requests";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 503: return "Service Unavailable";
    case 505: return "HTTP Version Not Supported";
    default: return "Unknown";
  }
}

}  // namespace kairo::server
