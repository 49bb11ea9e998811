#pragma once
// vLLM's runtime LoRA endpoints, on with --allow-runtime-lora (lora_endpoints.cpp):
//   POST /v1/load_lora_adapter   {"lora_name": N, "lora_path": P[, "scale": S]}  reads and checks P as --lora does
//   POST /v1/unload_lora_adapter {"lora_name": N}
// Success is vLLM's 200 with a plain-text line. An unloaded adapter takes no new requests at once; requests already
// running with it finish under it, and the engine frees it after the last one.
#include "server/auth.h"
#include "server/exchange.h"
#include "server/http/http_types.h"
#include "server/server_context.h"

namespace kairo::server {

void handle_load_lora_adapter(ServerContext& ctx, const Backend& backend, const HttpRequest& req, const Caller& caller,
                              Exchange& exchange);
void handle_unload_lora_adapter(ServerContext& ctx, const Backend& backend, const HttpRequest& req,
                                const Caller& caller, Exchange& exchange);

}  // namespace kairo::server
