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

// What a byte in the pipe asks for: 0 = stop() was called, 1 = SIGINT/SIGTERM, 2 = SIGHUP (reload the keys).
constexpr char kReloadByte = 2;

void on_signal(int) {
  if (g_signal_count.fetch_add(1) >= 1) _exit(130);  // a second Ctrl-C: stop waiting for the drain
  const char byte = 1;
  [[maybe_unused]] ssize_t n = write(g_signal_pipe[1], &byte, 1);
}

void on_hangup(int) {
  const int saved_errno = errno;
  [[maybe_unused]] ssize_t n = write(g_signal_pipe[1], &kReloadByte, 1);
  errno = saved_errno;
}

// SIGHUP's default action ends the process. Between start() (which reads the keys) and run_until_signal() the model
// loads, which can take minutes: a reload asked for then is remembered and done once the server is ready.
std::atomic<bool> g_reload_pending{false};

void on_hangup_before_ready(int) { g_reload_pending.store(true); }

}  // namespace

struct Server::Impl {
  Impl(ServerConfig config, std::vector<ModelEntry> models)
      : ctx_ptr(std::make_shared<ServerContext>(std::move(config), std::move(models))),
        ctx(*ctx_ptr),
        router(ctx_ptr) {}

  std::shared_ptr<ServerContext> ctx_ptr;  // shared with generation jobs, which may outlive the Server
  ServerContext& ctx;
  Router router;
  std::unique_ptr<HttpServer> http;
  std::mutex stop_mutex;
  bool stopped = false;
  bool drained = true;
};

Server::Server(ServerConfig config, ModelInfo model)
    : impl_(std::make_unique<Impl>(std::move(config), std::vector<ModelEntry>{ModelEntry{std::move(model)}})) {}

Server::Server(ServerConfig config, std::vector<ModelEntry> models, ModelLimits limits)
    : impl_(std::make_unique<Impl>(std::move(config), std::move(models))) {
  impl_->ctx.models.set_limits(limits);
}

Server::~Server() { stop(); }

Result<size_t> Server::reload_api_keys() {
  ServerContext& ctx = impl_->ctx;
  const std::string& path = ctx.config.api_keys_file;
  if (path.empty()) return Error{"there is no keys file to reload (--api-keys-file)"};
  KAIRO_TRY_ASSIGN(std::vector<Tenant> tenants, load_tenants_file(path));
  std::vector<std::string> names;
  for (const auto& t : tenants) names.push_back(t.name);
  KAIRO_TRY_STATUS(ctx.keys.set_tenants(std::move(tenants)));
  ctx.tenant_usage.track(names);
  return names.size();
}

Status Server::start() {
  const ServerConfig& c = impl_->ctx.config;
  if (!c.api_keys_file.empty()) {
    struct sigaction hup = {};
    hup.sa_handler = on_hangup_before_ready;
    sigemptyset(&hup.sa_mask);
    hup.sa_flags = SA_RESTART;
    sigaction(SIGHUP, &hup, nullptr);
    g_reload_pending.store(false);  // the read below is the one a reload before it asked for
    auto n_keys = reload_api_keys();
    if (!n_keys.ok()) return n_keys.error();
  }
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
      [ctx](int status, const std::string& message, const std::string& path) {
        ctx->metrics.count_http_status(status);
        HttpResponse resp;
        resp.status = status;
        resp.body = error_renderer_for(path)(api_error(status, message));
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
  LoadedModel loaded;
  loaded.engine = &engine;
  loaded.tokenizer = &tokenizer;
  loaded.chat_template = std::move(chat_template);
  loaded.template_traits = traits;
  impl_->ctx.models.attach(impl_->ctx.models.primary(), std::move(loaded));
  mark_ready();
}

Status Server::load(const std::string& id) {
  ModelRegistry& models = impl_->ctx.models;
  for (const auto& m : models.models()) {
    if (m->info.id == id) return models.load(*m);
  }
  return Error{"no served model has the id " + id};
}

void Server::mark_ready() { impl_->ctx.ready.store(true); }

int64_t Server::n_unloads(const std::string& id) const {
  const ModelRegistry& models = impl_->ctx.models;
  for (const auto& m : models.models()) {
    if (m->info.id == id) return static_cast<int64_t>(models.n_unloads(*m));
  }
  return -1;
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
  const bool reloads = !impl_->ctx.config.api_keys_file.empty();
  if (reloads) {
    struct sigaction hup = {};
    hup.sa_handler = on_hangup;
    sigemptyset(&hup.sa_mask);
    hup.sa_flags = SA_RESTART;
    sigaction(SIGHUP, &hup, nullptr);
    if (g_reload_pending.exchange(false)) on_hangup(SIGHUP);  // asked for while the model loaded
  }
  if (on_ready) on_ready();
  for (;;) {
    char byte = 0;
    const ssize_t n = read(g_signal_pipe[0], &byte, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n != 1 || byte != kReloadByte) break;
    // Here, not in the handler: reading and parsing a file is not async-signal-safe.
    const std::string& path = impl_->ctx.config.api_keys_file;
    if (auto n_keys = reload_api_keys(); n_keys.ok()) {
      std::fprintf(stderr, "kairo serve: SIGHUP: reloaded %zu API key%s from %s\n", *n_keys, *n_keys == 1 ? "" : "s",
                   path.c_str());
    } else {
      const size_t n_kept = impl_->ctx.keys.n_tenants();
      std::fprintf(stderr, "kairo serve: SIGHUP: error: %s; keeping the %zu API key%s in use\n",
                   n_keys.error().message.c_str(), n_kept, n_kept == 1 ? "" : "s");
    }
  }
  if (g_signal_count.load() > 0) {
    std::fprintf(stderr, "kairo serve: shutting down (finishing in-flight requests for up to %.0f s)\n",
                 impl_->ctx.config.shutdown_timeout_s);
  }
  const bool drained = stop();
  signal(SIGINT, SIG_DFL);
  signal(SIGTERM, SIG_DFL);
  if (reloads) signal(SIGHUP, SIG_DFL);
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
  // The models' engines are destroyed here, never on an engine thread through a job's last reference to the context.
  ctx.models.shutdown(Clock::now() + std::chrono::seconds(5));
  impl_->drained = drained;
  return drained;
}

const ServerMetrics& Server::metrics() const { return impl_->ctx.metrics; }
size_t Server::n_inflight() const { return impl_->ctx.inflight.size(); }
int Server::n_connections() const { return impl_->http ? impl_->http->n_connections() : 0; }

}  // namespace kairo::server
