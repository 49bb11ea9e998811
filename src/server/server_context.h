#pragma once
// State the routes and generation jobs share: configuration, the attached engine (absent while the model loads),
// metrics, the API keys and their tenants' usage, and the registry of in-flight generations that graceful shutdown drains.
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
#include "server/server_config.h"
#include "server/tenant_usage.h"
#include "tokenizer/tokenizer.h"

namespace kairo::server {

class GenerationJob;

// What serving needs from the loaded model. Attached once; read without locking afterwards.
struct Backend {
  engine::EngineClient* engine = nullptr;
  const tokenizer::Tokenizer* tokenizer = nullptr;
  ChatTemplate chat_template;  // empty: chatml_template()
  ChatTemplateTraits template_traits;  // thinking model? its tool-call format?
};

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
  ServerContext(ServerConfig c, ModelInfo m)
      : config(std::move(c)),
        model(std::move(m)),
        metrics(config.metrics_prefix, model.id),
        keys(config.api_keys),
        loras(model.adapters) {}

  const ServerConfig config;
  const ModelInfo model;
  std::atomic<const Backend*> backend{nullptr};
  std::unique_ptr<Backend> backend_owner;  // set once by Server::attach
  std::atomic<bool> shutting_down{false};
  ServerMetrics metrics;
  InflightJobs inflight;
  mutable GrammarCache grammars;  // thread-safe; used from const request handlers
  mutable KeyRing keys;           // thread-safe; the tenants are replaced on SIGHUP (Server::reload_api_keys)
  mutable TenantUsage tenant_usage;  // thread-safe; by tenant name, so it outlives reloads
  mutable LoraRegistry loras;        // thread-safe; the adapters served by name, changed by load/unload
};

}  // namespace kairo::server
