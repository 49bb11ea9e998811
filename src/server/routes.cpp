#include "server/routes.h"

#include <random>
#include <string_view>

#include "core/format.h"
#include "server/anthropic/anthropic_error.h"
#include "server/auth.h"
#include "server/endpoints.h"
#include "server/exchange.h"
#include "server/lora_endpoints.h"
#include "server/openai/parse_request.h"
#include "server/openai/render_response.h"
#include "server/web_ui.h"

namespace kairo::server {

namespace {

enum class Route {
  Health, Metrics, Models, Model, Completions, ChatCompletions, Messages, CountTokens, Responses, Embeddings, Tokenize,
  Detokenize, LoadLora, UnloadLora, WebUi, None
};

struct RouteMatch {
  Route route = Route::None;
  const char* method = "";  // the one method the path serves
};

RouteMatch match(const std::string& path) {
  if (path == "/health") return {Route::Health, "GET"};
  if (path == "/metrics") return {Route::Metrics, "GET"};
  if (path == "/v1/models") return {Route::Models, "GET"};
  if (path.rfind("/v1/models/", 0) == 0 && path.size() > 11) return {Route::Model, "GET"};
  if (path == "/v1/completions") return {Route::Completions, "POST"};
  if (path == "/v1/chat/completions") return {Route::ChatCompletions, "POST"};
  if (path == "/v1/messages") return {Route::Messages, "POST"};
  if (path == "/v1/messages/count_tokens") return {Route::CountTokens, "POST"};
  if (path == "/v1/responses") return {Route::Responses, "POST"};
  if (path == "/v1/embeddings") return {Route::Embeddings, "POST"};
  if (path == "/tokenize") return {Route::Tokenize, "POST"};
  if (path == "/detokenize") return {Route::Detokenize, "POST"};
  if (path == "/v1/load_lora_adapter") return {Route::LoadLora, "POST"};
  if (path == "/v1/unload_lora_adapter") return {Route::UnloadLora, "POST"};
  if (is_web_ui_path(path)) return {Route::WebUi, "GET"};
  return {};
}

// Anthropic's clients read errors in Anthropic's shape only.
bool speaks_anthropic(Route route) { return route == Route::Messages || route == Route::CountTokens; }

// A client's X-Request-Id is echoed when it is a sane token; otherwise (or absent) one is made.
std::string request_id_for(const HttpRequest& req) {
  const std::string& given = req.header("x-request-id");
  bool ok = !given.empty() && given.size() <= 128;
  for (unsigned char c : given) ok = ok && c > 32 && c < 127;
  if (ok) return given;
  thread_local std::mt19937_64 rng{std::random_device{}()};
  return strprintf("%016llx%016llx", static_cast<unsigned long long>(rng()), static_cast<unsigned long long>(rng()));
}

HeaderList common_headers(const ServerConfig& config, const std::string& request_id) {
  HeaderList h = {{"X-Request-Id", request_id}};
  if (!config.cors_origin.empty()) {
    h.emplace_back("Access-Control-Allow-Origin", config.cors_origin);
    if (config.cors_origin != "*") h.emplace_back("Vary", "Origin");
  }
  return h;
}

void dispatch(const std::shared_ptr<ServerContext>& ctx, Route route, const Backend& backend, const HttpRequest& req,
              const Caller& caller, const std::shared_ptr<Exchange>& exchange) {
  switch (route) {
    case Route::Completions:
      return handle_completions(ctx, backend, req, caller, exchange);
    case Route::ChatCompletions:
      return handle_chat_completions(ctx, backend, req, caller, exchange);
    case Route::Messages:
      return handle_messages(ctx, backend, req, caller, exchange);
    case Route::CountTokens:
      return handle_count_tokens(*ctx, backend, req, caller, *exchange);
    case Route::Responses:
      return handle_responses(ctx, backend, req, caller, exchange);
    case Route::Embeddings:
      return handle_embeddings(ctx, backend, req, caller, exchange);
    case Route::Tokenize:
      return handle_tokenize(*ctx, backend, req, *exchange);
    case Route::Detokenize:
      return handle_detokenize(*ctx, backend, req, *exchange);
    case Route::LoadLora:
      return handle_load_lora_adapter(*ctx, backend, req, caller, *exchange);
    case Route::UnloadLora:
      return handle_unload_lora_adapter(*ctx, backend, req, caller, *exchange);
    default:
      break;
  }
}

}  // namespace

const std::string& HttpRequest::header(const std::string& lower_name) const {
  static const std::string kEmpty;
  for (const auto& [name, value] : headers) {
    if (name == lower_name) return value;
  }
  return kEmpty;
}

Exchange::ErrorRenderer error_renderer_for(const std::string& path) {
  return speaks_anthropic(match(path).route) ? render_anthropic_error : render_error;
}

void Router::handle(HttpRequest req, std::shared_ptr<ResponseSink> sink) {
  const std::string request_id = request_id_for(req);
  auto exchange = std::make_shared<Exchange>(std::move(sink), req, request_id,
                                             common_headers(ctx_.config, request_id), &ctx_.metrics,
                                             ctx_.config.access_log);
  RouteMatch m = match(req.path);
  if (m.route == Route::WebUi && !ctx_.config.webui) m = {};  // --no-webui
  // Anthropic's clients read errors in Anthropic's shape: every refusal below, the route's own included.
  const bool anthropic = speaks_anthropic(m.route);
  if (anthropic) exchange->set_error_renderer(render_anthropic_error);

  if (req.method == "OPTIONS" && !ctx_.config.cors_origin.empty() && m.route != Route::None) {
    HttpResponse resp;  // CORS preflight: answered without a key (browsers send none)
    resp.status = 204;
    resp.content_type.clear();
    resp.headers = {{"Access-Control-Allow-Methods", "GET, HEAD, POST, OPTIONS"},
                    {"Access-Control-Allow-Headers",
                     "Authorization, Content-Type, X-Request-Id, X-Api-Key, Anthropic-Version, Anthropic-Beta"},
                    {"Access-Control-Max-Age", "600"}};
    return exchange->send(std::move(resp));
  }
  if (m.route == Route::None) {
    return exchange->send_error(api_error(404, strprintf("no route for %s %s; this server serves /v1/completions, "
                                                         "/v1/chat/completions, /v1/messages, /v1/responses, "
                                                         "/v1/models, /tokenize, /detokenize, /health and /metrics",
                                                         req.method.c_str(), quote_for_error(req.path, 80).c_str()),
                                          "not_found"));
  }
  // HEAD is GET without the body (RFC 9110 §9.3.2): the route answers as for GET and the HTTP layer writes only
  // the head, Content-Length included.
  const bool is_get = std::string_view(m.method) == "GET";
  if (req.method != m.method && !(is_get && req.method == "HEAD")) {
    const char* allowed = is_get ? "GET or HEAD" : m.method;
    ApiError e = api_error(405, strprintf("%s does not accept %s; use %s", req.path.c_str(),
                                          quote_for_error(req.method, 16).c_str(), allowed),
                           "method_not_allowed");
    e.headers.emplace_back("Allow", is_get ? "GET, HEAD" : m.method);
    return exchange->send_error(e);
  }

  if (m.route == Route::WebUi) {
    // Unauthenticated, and served while the model loads: the page asks for the key when the API answers 401.
    const EmbeddedFile* file = find_web_ui_file(req.path);
    if (!file) {
      return exchange->send_error(api_error(404, strprintf("the web UI has no file %s",
                                                           quote_for_error(req.path, 80).c_str()),
                                            "not_found"));
    }
    return exchange->send(web_ui_response(*file, req.header("if-none-match")));
  }
  if (m.route == Route::Health) {
    // Unauthenticated: load balancers and orchestrators probe it.
    if (ctx_.shutting_down.load()) return exchange->send_json(503, render_health("shutting_down"));
    if (!ctx_.ready.load()) return exchange->send_json(503, render_health("loading"));
    for (const auto& model : ctx_.models.models()) {
      const auto backend = ctx_.models.loaded(*model);
      if (!backend) continue;
      if (engine::EngineFailure failure = backend->engine->failure_state(); failure.kind != engine::FailureKind::None)
        return exchange->send_json(503, render_health(engine::failure_status(failure.kind), failure.message));
    }
    return exchange->send_json(200, render_health("ok"));
  }
  // Anthropic's clients send their key as `x-api-key`; accepted on every route, as Authorization's fallback.
  const std::optional<Caller> caller = ctx_.keys.authenticate(req.header("authorization"), req.header("x-api-key"));
  if (!caller) {
    ApiError e = api_error(401, anthropic ? "missing or invalid API key: send the header 'x-api-key: <key>' or "
                                            "'Authorization: Bearer <key>'"
                                          : "missing or invalid API key: send the header 'Authorization: Bearer <key>'",
                           "invalid_api_key");
    e.headers.emplace_back("WWW-Authenticate", "Bearer");
    return exchange->send_error(e);
  }
  if (m.route == Route::Metrics) {
    HttpResponse resp;
    resp.content_type = "text/plain; version=0.0.4; charset=utf-8";
    resp.body = render_metrics();
    return exchange->send(std::move(resp));
  }
  if (!ctx_.ready.load()) {
    ApiError e = api_error(503, "the model is still loading; retry shortly (GET /health turns 200 when ready)",
                           "model_loading");
    e.headers.emplace_back("Retry-After", std::to_string(ctx_.config.retry_after_s));
    return exchange->send_error(e);
  }
  if (ctx_.shutting_down.load() && (m.route == Route::Completions || m.route == Route::ChatCompletions ||
                                     m.route == Route::Messages || m.route == Route::Responses ||
                                     m.route == Route::Embeddings)) {
    return exchange->send_error(api_error(503, "the server is shutting down and takes no new requests",
                                          "shutting_down"));
  }
  if (m.route == Route::Models) return exchange->send_json(200, render_model_list(*caller));
  if (m.route == Route::Model) {
    const std::string id = req.path.substr(11);
    ServedModel* served = ctx_.models.find(id);
    if (!served) return exchange->send_error(ctx_.models.unknown_model(id));
    if (auto e = check_model_name(*served, id)) return exchange->send_error(*e);
    if (auto e = check_tenant_model(ctx_, *served, *caller, id)) return exchange->send_error(*e);
    return exchange->send_json(200, render_model(served->info, id, context_length(*served), served->loras.find(id)));
  }

  // The model the request names (the body's `model`; adapters' routes: the primary model), loaded first if it is not.
  std::string name;
  if (ctx_.models.size() > 1 && m.route != Route::LoadLora && m.route != Route::UnloadLora) {
    auto body = parse_json_body(req.body, ctx_.config.limits.max_json_depth);
    if (!body.ok()) return exchange->send_error(body.error());
    if (body->is_object() && body->contains("model") && (*body)["model"].is_string()) name = (*body)["model"];
  }
  ServedModel* served = ctx_.models.find(name);
  if (!served) return exchange->send_error(ctx_.models.unknown_model(name));
  if (auto lease = ctx_.models.try_acquire(*served)) return dispatch(ctx_ptr_, m.route, *lease, req, *caller, exchange);
  if (auto e = check_tenant_model(ctx_, *served, *caller, name)) return exchange->send_error(*e);  // before a load
  // The load runs on the registry's thread; the request continues on its connection's executor. The callback holds
  // the context weakly: the registry's thread must never drop the context's last reference (it would join itself).
  auto request = std::make_shared<HttpRequest>(std::move(req));
  std::weak_ptr<ServerContext> weak_ctx = ctx_ptr_;
  ctx_.models.load_then(*served, [weak_ctx, route = m.route, request, caller = *caller,
                                  exchange](ApiResult<std::shared_ptr<const Backend>> lease) {
    exchange->post([weak_ctx, route, request, caller, exchange, lease]() mutable {
      auto ctx = weak_ctx.lock();
      if (!ctx) return exchange->send_error(api_error(503, "the server is shutting down", "shutting_down"));
      if (!lease.ok()) return exchange->send_error(lease.error());
      dispatch(ctx, route, *lease.value(), *request, caller, exchange);
    });
  });
}

int Router::context_length(const ServedModel& model) const {
  const auto backend = ctx_.models.loaded(model);
  return backend ? backend->engine->context_length() : model.info.context_length;
}

std::string Router::render_model_list(const Caller& caller) const {
  std::vector<ModelListing> listings;
  for (const auto& model : ctx_.models.models()) {
    // A key lists only what it may use.
    const std::vector<std::string> names = served_names(model->info);
    ModelListing& l = listings.emplace_back();
    l.model = &model->info;
    l.context_length = context_length(*model);
    l.served = !caller.tenant || may_use_model(*caller.tenant, "", names);
    for (const auto& a : model->loras.list()) {
      if (!caller.tenant || may_use_model(*caller.tenant, a.name, names)) l.adapters.push_back(a);
    }
  }
  return render_models(listings);
}

std::string Router::render_metrics() const {
  std::vector<std::string> parts;
  for (const auto& model : ctx_.models.models()) {
    const auto backend = ctx_.models.loaded(*model);
    parts.push_back(model->metrics.render(backend ? backend->engine->stats() : engine::EngineStats{},
                                          model->info.device_bandwidth_gbps));
  }
  return merge_metric_families(parts) + ctx_.metrics.render_tenants(ctx_.tenant_usage.snapshot()) +
         ctx_.models.render_metrics();
}

}  // namespace kairo::server
