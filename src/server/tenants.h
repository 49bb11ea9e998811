#pragma once
// Tenants: named API keys with limits, read from the JSON keys file of `kairo serve --api-keys-file` (reloaded on
// SIGHUP). Plain data and a strict parser; the server's key ring (auth.h) looks keys up, tenant_usage.h enforces the
// limits.
//
//   {"keys": [{"name": "team-a", "key": "sk-...", "max_concurrent_requests": 8, "tokens_per_minute": 100000,
//              "priority": "high", "weight": 2.5, "models": ["kairo"]}]}
//
// Only "name" and "key" are required. A limit that is 0 or absent is no limit.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace kairo::server {

// The share of the engine a tenant gets while several have work (the scheduler's weighted fair queueing):
// high = 4, normal = 1 (the default), low = 0.25 (kPriorityWeights). A key's "weight" overrides its class's.
enum class PriorityClass { High, Normal, Low };

const char* priority_class_name(PriorityClass c);
double priority_class_weight(PriorityClass c);

struct Tenant {
  std::string name;  // shown in /metrics, errors and the engine request; never the key
  std::string key;   // the secret clients send as `Authorization: Bearer <key>`
  int max_concurrent_requests = 0;  // generation requests in flight at once (n choices count once); 0 = no limit
  int64_t tokens_per_minute = 0;    // prompt + generated tokens, as a token bucket; 0 = no limit
  PriorityClass priority = PriorityClass::Normal;
  double weight = 1.0;              // the class's weight unless the entry gives its own
  // Names of what the key may ask for as `model`; empty = everything served. The served model's names (its id and
  // --served-model-name aliases) are one model: any of them in the list allows all of them. LoRA adapters, once
  // served, are named here too.
  std::vector<std::string> models;

  bool may_use_every_model() const { return models.empty(); }
};

// Whether the tenant may ask for `model` ("" = the served model). `served_names` are the served model's id and
// aliases, which count as one model.
bool may_use_model(const Tenant& tenant, const std::string& model, const std::vector<std::string>& served_names);

// Parses and validates the keys file's text. Errors name `path`, the entry (index and name) and what to change:
// unknown fields, wrong types, a missing or empty name or key, duplicate names or keys, negative limits, an unknown
// priority class, a weight that is not a positive number, an empty list of keys.
Result<std::vector<Tenant>> parse_tenants(std::string_view json_text, const std::string& path);

// Reads `path` and parses it.
Result<std::vector<Tenant>> load_tenants_file(const std::string& path);

}  // namespace kairo::server
