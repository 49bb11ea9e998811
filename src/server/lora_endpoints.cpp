#include "server/lora_endpoints.h"

#include <cstdio>

#include "core/format.h"
#include "server/lora_selection.h"
#include "server/openai/parse_request.h"

namespace kairo::server {
namespace {

// Refusals before the body is read: the endpoints are off, or the key may not change what the server serves.
std::optional<ApiError> refuse_caller(const ServerContext& ctx, const HttpRequest& req, const Caller& caller) {
  if (!ctx.config.allow_runtime_lora) {
    return api_error(404, strprintf("POST %s is off: start kairo serve with --allow-runtime-lora to load and unload "
                                    "LoRA adapters while it serves",
                                    req.path.c_str()),
                     "not_found");
  }
  // A key limited to some models could otherwise load an adapter under a name its `models` list allows.
  if (caller.tenant && !caller.tenant->may_use_every_model()) {
    return api_error(403, strprintf("key '%s' may use only some models, so it may not load or unload LoRA adapters; "
                                    "use a key without a \"models\" list",
                                    caller.tenant->name.c_str()),
                     "permission_denied");
  }
  return std::nullopt;
}

ApiError from_adapter_refusal(const engine::AdapterRefusal& r, const char* param) {
  switch (r.kind) {
    case engine::AdapterError::Invalid: return invalid_param(param, r.message);
    case engine::AdapterError::Full: return api_error(409, r.message, "lora_capacity_exceeded");
    case engine::AdapterError::NotLoaded: return api_error(404, r.message, "lora_not_found");
    case engine::AdapterError::Unavailable: break;
  }
  return api_error(503, r.message, "lora_unavailable");
}

void send_text(Exchange& exchange, std::string text) {
  HttpResponse resp;
  resp.content_type = "text/plain; charset=utf-8";
  resp.body = std::move(text);
  exchange.send(std::move(resp));
}

std::string quoted_name(const std::string& name) {
  const std::string q = quote_for_error(name, 64);
  return "'" + q.substr(1, q.size() - 2) + "'";
}

}  // namespace

void handle_load_lora_adapter(ServerContext& ctx, const Backend& backend, const HttpRequest& req, const Caller& caller,
                              Exchange& exchange) {
  if (auto e = refuse_caller(ctx, req, caller)) return exchange.send_error(*e);
  auto body = parse_json_body(req.body, ctx.config.limits.max_json_depth);
  if (!body.ok()) return exchange.send_error(body.error());
  auto parsed = parse_load_lora_request(*body);
  if (!parsed.ok()) return exchange.send_error(parsed.error());
  if (is_base_model_name(backend.model->info, parsed->name)) {
    return exchange.send_error(invalid_param(
        "lora_name", strprintf("'lora_name' %s is the base model's name; give the adapter a name of its own",
                               quote_for_error(parsed->name, 64).c_str())));
  }
  if (!backend.model->loras.reserve(parsed->name)) {
    return exchange.send_error(invalid_param(
        "lora_name", strprintf("The lora adapter %s has already been loaded; unload it first "
                               "(POST /v1/unload_lora_adapter) to load another file under its name",
                               quoted_name(parsed->name).c_str())));
  }
  auto loaded = backend.engine->load_adapter(parsed->path, parsed->scale);
  if (const auto* refusal = std::get_if<engine::AdapterRefusal>(&loaded)) {
    backend.model->loras.cancel(parsed->name);
    return exchange.send_error(from_adapter_refusal(*refusal, "lora_path"));
  }
  const engine::LoadedAdapter& a = std::get<engine::LoadedAdapter>(loaded);
  backend.model->loras.commit(parsed->name, a.id, a.generation);
  std::fprintf(stderr, "kairo serve: LoRA adapter %s = %s (scale %g) loaded, lora id %d\n", parsed->name.c_str(),
               parsed->path.c_str(), static_cast<double>(parsed->scale), a.id - 1);
  send_text(exchange, strprintf("Success: LoRA adapter %s added successfully.", quoted_name(parsed->name).c_str()));
}

void handle_unload_lora_adapter(ServerContext& ctx, const Backend& backend, const HttpRequest& req,
                                const Caller& caller, Exchange& exchange) {
  if (auto e = refuse_caller(ctx, req, caller)) return exchange.send_error(*e);
  auto body = parse_json_body(req.body, ctx.config.limits.max_json_depth);
  if (!body.ok()) return exchange.send_error(body.error());
  auto parsed = parse_unload_lora_request(*body);
  if (!parsed.ok()) return exchange.send_error(parsed.error());
  std::optional<ServedAdapter> removed = backend.model->loras.remove(parsed->name);
  if (!removed) {
    ApiError e = api_error(404, strprintf("The lora adapter %s cannot be found", quoted_name(parsed->name).c_str()),
                           "lora_not_found");
    e.param = "lora_name";
    return exchange.send_error(e);
  }
  auto unloaded = backend.engine->unload_adapter(removed->id, removed->generation);
  if (const auto* refusal = std::get_if<engine::AdapterRefusal>(&unloaded)) {
    return exchange.send_error(from_adapter_refusal(*refusal, "lora_name"));
  }
  const int n_running = std::get<int>(unloaded);
  std::fprintf(stderr, "kairo serve: LoRA adapter %s unloaded%s\n", parsed->name.c_str(),
               n_running > 0 ? strprintf(" (freed once its %d running requests finish)", n_running).c_str() : "");
  send_text(exchange, strprintf("Success: LoRA adapter %s removed successfully.", quoted_name(parsed->name).c_str()));
}

}  // namespace kairo::server
