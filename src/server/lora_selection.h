#pragma once
// Which LoRA adapter a generation request runs with, from its `model` (vLLM's way: an adapter's name) and
// llama-server's `lora` field ([{"id": N, "scale": S}]: N is the adapter's place among the server's adapters, from 0,
// as in llama-server's --lora list; listed with scale 0 or not listed, an adapter is off).
//
// Without `lora`, `model` decides: the base model's id, an alias or nothing is the base, an adapter's name that
// adapter at the scale it was loaded with. With `lora`, it decides, and `model` must agree: it is the base model's
// name (or absent), or the name of the adapter `lora` lists. kairo applies one adapter per request, so at most one
// entry may have a scale other than 0. A scale of 0 is the base model exactly.
#include <cstdint>
#include <optional>
#include <string>

#include "server/api_error.h"
#include "server/auth.h"
#include "server/lora_registry.h"
#include "server/openai/request_types.h"
#include "server/server_config.h"
#include "server/server_context.h"

namespace kairo::server {

struct AdapterChoice {
  std::string name;          // empty: the base model
  int id = 0;                // engine::Request::adapter (0: the base)
  uint64_t generation = 0;   // engine::Request::adapter_generation
  std::optional<float> scale;  // engine::Request::adapter_scale: set when `lora` gave one
};

// Whether `name` means the base model: its id, an alias, or "" (no `model`).
bool is_base_model_name(const ModelInfo& model, const std::string& name);
// OpenAI's 404 model_not_found for a `model` that is neither the base model nor a served adapter.
ApiError unknown_model_error(const ModelInfo& model, const std::string& name);

// 404 for a `model` the server does not serve (check_model_name's error), 400 for a `lora` that names no loaded
// adapter, more than one, or another one than `model`.
ApiResult<AdapterChoice> choose_adapter(const ModelInfo& model, const LoraRegistry& loras,
                                        const GenerationParams& params);
// choose_adapter, then the caller's key must be allowed to use what the request runs: the adapter, or the base model
// when it runs none (403, as check_tenant_model).
ApiResult<AdapterChoice> choose_permitted_adapter(const ServerContext& ctx, const ServedModel& served,
                                                  const Caller& caller, const GenerationParams& params);

}  // namespace kairo::server
