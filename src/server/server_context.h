#pragma once
// State the routes and generation jobs share: configuration, the served models (model_registry.h: each one's
// description, adapters, metrics and, while loaded, engine), the API keys and their tenants' usage, and the registry
// of in-flight generations that graceful shutdown drains.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "engine/engine_client.h"
#include "server/auth.h"
#include "server/chat_template.h"
#include "server/grammar_cache.h"
#include "server/lora_registry.h"
#include "server/metrics.h"
#include "server/model_registry.h"
#include "server/server_config.h"
#include "server/tenant_usage.h"
#include "tokenizer/tokenizer.h"

namespace kairo::server {

class GenerationJob;

class InflightJobs {
 public:
  uint64_t add(std::weak_ptr<GenerationJob> job);
  void remove(uint64_t id);
  size_t size() const;
  // True when none are left by the deadline.
  bool wait_empty(std::chrono::steady_clock::time_point deadline) const;
  std::vector<std::shared_ptr<GenerationJob>> snapshot() const;

 private:
  mutable std::mutex mutex_;
  mutable std::condition_variable cv_;
  uint64_t next_id_ = 1;
  std::unordered_map<uint64_t, std::weak_ptr<GenerationJob>> jobs_;
};

struct ServerContext {
  static ServerMetrics& add_all(ModelRegistry& models, std::vector<ModelEntry>& entries) {
    for (ModelEntry& e : entries) models.add(std::move(e.info), e.footprint_bytes, std::move(e.loader));
    return models.primary().metrics;
  }

  ServerContext(ServerConfig c, ModelInfo primary) : ServerContext(std::move(c), {ModelEntry{std::move(primary)}}) {}
  // entries: at least one; the first is the primary model.
  ServerContext(ServerConfig c, std::vector<ModelEntry> entries)
      : config(std::move(c)), models(config.metrics_prefix), metrics(add_all(models, entries)), keys(config.api_keys) {}

  const ServerConfig config;
  ModelRegistry models;            // the served models; more are added before start (Server::add_model)
  ServerMetrics& metrics;          // the primary model's; it also counts HTTP statuses and renders the tenants' series
  std::atomic<bool> ready{false};  // /health: a model is attached or the startup loads are done
  std::atomic<bool> shutting_down{false};
  InflightJobs inflight;
  mutable GrammarCache grammars;  // thread-safe; used from const request handlers
  mutable KeyRing keys;           // thread-safe; the tenants are replaced on SIGHUP (Server::reload_api_keys)
  mutable TenantUsage tenant_usage;  // thread-safe; by tenant name, so it outlives reloads
};

}  // namespace kairo::server
