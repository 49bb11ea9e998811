#include "server/routes.h"

#include <random>
#include <string_view>

#include "core/format.h"
#include "server/anthropic/anthropic_error.h"
#include "server/auth.h"
#include "server/endpoints.h"
#include "server/exchange.h"
#include "server/lora_endpoints.h"
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

}  // namespace

const std::string& HttpRequest::header(const std::string& lower_name) const {
  static const std::string kEmpty;
  for (const auto& [name, value] : headers) {
    if (name == lower_name) return value;
  }
  return kEmpty;
}

void Router::handle(HttpRequest req, std::shared_ptr<ResponseSink> sink) {
  const std::string request_id = request_id_for(req);
  auto exchange = std::make_shared<Exchange>(std::move(sink), req, request_id,
                                             common_headers(ctx_.config, request_id), &ctx_.metrics,
                                             ctx_.config.access_log);
  RouteMatch m = match(req.path);
  if (m.route == Route::WebUi && !ctx_.config.webui) m = {};  // --no-webui
  // Anthropic's clients read errors in Anthropic's shape: every refusal below, the route's own included.
  const bool anthropic = m.route == Route::Messages || m.route == Route::CountTokens;
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
  const Backend* backend = ctx_.backend.load();
  if (m.route == Route::Health) {
    // Unauthenticated: load balancers and orchestrators probe it.
    if (ctx_.shutting_down.load()) return exchange->send_json(503, render_health("shutting_down"));
    if (!backend) return exchange->send_json(503, render_health("loading"));
    if (engine::EngineFailure failure = backend->engine->failure_state(); failure.kind != engine::FailureKind::None)
      return exchange->send_json(503, render_health(engine::failure_status(failure.kind), failure.message));
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
    resp.body = ctx_.metrics.render(backend ? backend->engine->stats() : engine::EngineStats{},
                                    ctx_.model.device_bandwidth_gbps) +
                ctx_.metrics.render_tenants(ctx_.tenant_usage.snapshot());
    return exchange->send(std::move(resp));
  }
  if (!backend) {
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
  switch (m.route) {
    case Route::Models: {
      // A key lists only what it may use.
      const bool listed = !caller->tenant || may_use_model(*caller->tenant, "", served_names(ctx_.model));
      std::vector<ServedAdapter> adapters;
      for (const auto& a : ctx_.loras.list()) {
        if (!caller->tenant || may_use_model(*caller->tenant, a.name, served_names(ctx_.model))) adapters.push_back(a);
      }
      return exchange->send_json(200, render_models(ctx_.model, backend->engine->context_length(), listed, adapters));
    }
    case Route::Model: {
      const std::string id = req.path.substr(11);
      if (auto e = check_model_name(ctx_, id)) return exchange->send_error(*e);
      if (auto e = check_tenant_model(ctx_, *caller, id)) return exchange->send_error(*e);
      return exchange->send_json(
          200, render_model(ctx_.model, id, backend->engine->context_length(), ctx_.loras.find(id)));
    }
    case Route::Completions: return handle_completions(ctx_ptr_, *backend, req, *caller, exchange);
    case Route::ChatCompletions: return handle_chat_completions(ctx_ptr_, *backend, req, *caller, exchange);
    case Route::Messages: return handle_messages(ctx_ptr_, *backend, req, *caller, exchange);
    case Route::CountTokens: return handle_count_tokens(ctx_, *backend, req, *caller, *exchange);
    case Route::Responses: return handle_responses(ctx_ptr_, *backend, req, *caller, exchange);
    case Route::Embeddings: return handle_embeddings(ctx_ptr_, *backend, req, *caller, exchange);
    case Route::Tokenize: return handle_tokenize(ctx_, *backend, req, *exchange);
    case Route::Detokenize: return handle_detokenize(ctx_, *backend, req, *exchange);
    case Route::LoadLora: return handle_load_lora_adapter(ctx_, *backend, req, *caller, *exchange);
    case Route::UnloadLora: return handle_unload_lora_adapter(ctx_, *backend, req, *caller, *exchange);
    default: break;
  }
}

}  // namespace kairo::server
