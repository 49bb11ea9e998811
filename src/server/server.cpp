#include "server/server.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <mutex>
#include <thread>
#include <unistd.h>

#include "core/format.h"
#include "server/generation_job.h"
#include "server/http/http_server.h"
#include "server/http/tls_context.h"
#include "server/openai/render_response.h"
#include "server/routes.h"
#include "server/server_context.h"

namespace kairo::server {

namespace {

// Self-pipe: the signal handler only writes a byte; run_until_signal() blocks reading it.
int g_signal_pipe[2] = {-1, -1};
std::atomic<int> g_signal_count{0};

void on_signal(int) {
  if (g_signal_count.fetch_add(1) >= 1) _exit(130);  // a second Ctrl-C: stop waiting for the drain
  const char byte = 1;
  [[maybe_unused]] ssize_t n = write(g_signal_pipe[1], &byte, 1);
}

}  // namespace

struct Server::Impl {
  Impl(ServerConfig config, ModelInfo model)
      : ctx_ptr(std::make_shared<ServerContext>(std::move(config), std::move(model))), ctx(*ctx_ptr), router(ctx_ptr) {}

  std::shared_ptr<ServerContext> ctx_ptr;  // shared with generation jobs, which may outlive the Server
  ServerContext& ctx;
  Router router;
  std::unique_ptr<HttpServer> http;
  std::mutex stop_mutex;
  bool stopped = false;
  bool drained = true;
};

Server::Server(ServerConfig config, ModelInfo model) : impl_(std::make_unique<Impl>(std::move(config), std::move(model))) {}

Server::~Server() { stop(); }

Status Server::start() {
  const ServerConfig& c = impl_->ctx.config;
  HttpServerOptions options;
  options.http = c.http;
  options.max_body_bytes = c.limits.max_body_bytes;
  options.max_header_bytes = c.limits.max_header_bytes;
  if (!c.ssl_certfile.empty() || !c.ssl_keyfile.empty()) {
    auto tls = make_tls_context(c.ssl_certfile, c.ssl_keyfile);
    if (!tls.ok()) return tls.error();
    options.tls = std::move(tls.value());
  }
  ServerContext* ctx = &impl_->ctx;
  Router* router = &impl_->router;
  impl_->http = std::make_unique<HttpServer>(
      options, [router](HttpRequest req, std::shared_ptr<ResponseSink> sink) { router->handle(std::move(req), sink); },
      [ctx](int status, const std::string& message) {
        ctx->metrics.count_http_status(status);
        HttpResponse resp;
        resp.status = status;
        resp.body = render_error(api_error(status, message));
        return resp;
      });
  KAIRO_TRY_STATUS(impl_->http->listen(c.host, c.port));
  const int n_threads =
      c.n_http_threads > 0 ? c.n_http_threads : std::clamp<int>(std::thread::hardware_concurrency(), 1, 4);
  impl_->http->start(n_threads);
  return Status::success();
}

void Server::attach(engine::EngineClient& engine, const tokenizer::Tokenizer& tokenizer, ChatTemplate chat_template,
                    ChatTemplateTraits traits) {
  auto backend = std::make_unique<Backend>();
  backend->template_traits = traits;
  backend->engine = &engine;
  backend->tokenizer = &tokenizer;
  backend->chat_template = std::move(chat_template);
  impl_->ctx.backend.store(backend.get());
  impl_->ctx.backend_owner = std::move(backend);  // attached once; never replaced while requests may read it
}

int Server::port() const { return impl_->http ? impl_->http->port() : 0; }

bool Server::run_until_signal(const std::function<void()>& on_ready) {
  {
    // Under stop_mutex, so a stop() from another thread either sees the pipe (and wakes us) or ran before this and
    // is seen here.
    std::lock_guard lock(impl_->stop_mutex);
    if (impl_->stopped) return impl_->drained;
    if (pipe(g_signal_pipe) != 0) {
      g_signal_pipe[0] = g_signal_pipe[1] = -1;
    }
  }
  if (g_signal_pipe[0] < 0) return stop();
  g_signal_count.store(0);
  struct sigaction sa = {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  if (on_ready) on_ready();
  char byte = 0;
  while (read(g_signal_pipe[0], &byte, 1) < 0 && errno == EINTR) {
  }
  if (g_signal_count.load() > 0) {
    std::fprintf(stderr, "kairo serve: shutting down (finishing in-flight requests for up to %.0f s)\n",
                 impl_->ctx.config.shutdown_timeout_s);
  }
  const bool drained = stop();
  signal(SIGINT, SIG_DFL);
  signal(SIGTERM, SIG_DFL);
  std::lock_guard lock(impl_->stop_mutex);
  close(g_signal_pipe[0]);
  close(g_signal_pipe[1]);
  g_signal_pipe[0] = g_signal_pipe[1] = -1;
  return drained;
}

bool Server::stop() {
  std::lock_guard lock(impl_->stop_mutex);
  if (impl_->stopped) return impl_->drained;
  impl_->stopped = true;
  if (g_signal_pipe[1] >= 0) {
    // Wake run_until_signal() when stop() is called directly (harmless when a signal already did).
    const char byte = 0;
    [[maybe_unused]] ssize_t n = write(g_signal_pipe[1], &byte, 1);
  }
  if (!impl_->http) return true;
  using Clock = std::chrono::steady_clock;
  auto& ctx = impl_->ctx;
  ctx.shutting_down.store(true);
  impl_->http->stop_accepting();

  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(ctx.config.shutdown_timeout_s));
  bool drained = ctx.inflight.wait_empty(deadline);
  if (!drained) {
    for (auto& job : ctx.inflight.snapshot()) job->cancel_for_shutdown();
    // The engine frees an aborted request within a step; its clients then get their 503 / error event.
    ctx.inflight.wait_empty(Clock::now() + std::chrono::seconds(5));
  }
  // Let the last responses reach their clients (connections close after them) before cutting what is left.
  const auto flush_deadline = Clock::now() + std::chrono::seconds(3);
  while (impl_->http->n_connections() > 0 && Clock::now() < flush_deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  impl_->http->stop();
  impl_->drained = drained;
  return drained;
}

const ServerMetrics& Server::metrics() const { return impl_->ctx.metrics; }
size_t Server::n_inflight() const { return impl_->ctx.inflight.size(); }
int Server::n_connections() const { return impl_->http ? impl_->http->n_connections() : 0; }

}  // namespace kairo::server
