#pragma once
// The models one server serves, by name, and which of them are in memory.
//
// Each served model has its description (ModelInfo), its LoRA adapters and its metrics for the whole life of the
// server; its engine (a Backend) is there only while it is loaded. A model is loaded at startup (Server::attach, or
// load() before serving) or on demand when a request names it (acquire); loading one more first unloads the
// least-recently-used idle model while the loaded ones would exceed the limits (ModelLimits: a count and a memory
// budget in the planner's bytes, so the planner, not an out-of-memory, decides). A model is idle when no request holds
// it: requests hold a lease (the Backend's shared_ptr, GenerationJob keeps one until the engine's last callback), and
// a model with leases is never unloaded under them. When every loaded model is busy, a load waits for one to finish,
// up to ModelLimits::wait_s, then fails with a 503 that says which limit and which flag.
//
// Loads run one at a time on the registry's own thread, never on an HTTP thread. Thread-safe.
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/result.h"
#include "engine/engine_client.h"
#include "server/api_error.h"
#include "server/chat_template.h"
#include "server/lora_registry.h"
#include "server/metrics.h"
#include "server/server_config.h"
#include "tokenizer/tokenizer.h"

namespace kairo::server {

struct ServedModel;

// What a loaded model serves with. Read without locking; lives while any request holds it (shared_from_this is the
// lease a generation keeps).
struct Backend : std::enable_shared_from_this<Backend> {
  engine::EngineClient* engine = nullptr;
  const tokenizer::Tokenizer* tokenizer = nullptr;
  ChatTemplate chat_template;          // empty: chatml_template()
  ChatTemplateTraits template_traits;  // thinking model? its tool-call format?
  ServedModel* model = nullptr;        // whose engine this is
  std::shared_ptr<void> owner;         // the engine, tokenizer and weights behind the pointers (null: the caller's)
};

// A loader's result: the pointers stay valid while `owner` lives; dropping owner unloads the model.
struct LoadedModel {
  engine::EngineClient* engine = nullptr;
  const tokenizer::Tokenizer* tokenizer = nullptr;
  ChatTemplate chat_template;
  ChatTemplateTraits template_traits;
  std::shared_ptr<void> owner;
};
using ModelLoader = std::function<Result<LoadedModel>()>;

struct ServedModel {
  ServedModel(ModelInfo model_info, const std::string& metrics_prefix, uint64_t footprint, ModelLoader load)
      : info(std::move(model_info)),
        loras(info.adapters),
        metrics(metrics_prefix, info.id),
        footprint_bytes(footprint),
        loader(std::move(load)) {}

  const ModelInfo info;
  mutable LoraRegistry loras;      // thread-safe; the adapters served by name, changed by load/unload
  ServerMetrics metrics;           // its request series, kept across unloads (counters never go back)
  const uint64_t footprint_bytes;  // the planner's: weights + KV cache + activations + overhead; 0 = not counted
  const ModelLoader loader;        // empty: only Server::attach brings it in, and it is never unloaded
};

// A model to serve: its description, the planner's bytes for it and how to load it (loader empty: attached).
struct ModelEntry {
  ModelInfo info;
  uint64_t footprint_bytes = 0;
  ModelLoader loader;
};

struct ModelLimits {
  int max_loaded = 0;         // --max-loaded-models; 0 = no cap
  uint64_t budget_bytes = 0;  // the memory budget the loaded models' footprints share; 0 = no budget
  double wait_s = 60;         // how long a load waits for a busy model to become idle
};

class ModelRegistry {
 public:
  explicit ModelRegistry(std::string metrics_prefix);
  ~ModelRegistry();  // shutdown(), if the server did not call it
  ModelRegistry(const ModelRegistry&) = delete;
  ModelRegistry& operator=(const ModelRegistry&) = delete;

  // Before serving. The first model added is the primary one: requests without `model` run on it.
  ServedModel& add(ModelInfo info, uint64_t footprint_bytes = 0, ModelLoader loader = {});
  void set_limits(ModelLimits limits);

  ServedModel& primary() { return *models_.front(); }
  const std::vector<std::unique_ptr<ServedModel>>& models() const { return models_; }
  size_t size() const { return models_.size(); }

  // The model a request's `model` names: "" the primary, else the one with that id or alias, or whose LoRA adapter
  // it is. With one model served, every name finds it (the handlers then answer an unknown name in their own way).
  ServedModel* find(const std::string& name);
  // 404 naming every model this server serves.
  ApiError unknown_model(const std::string& name) const;

  // Makes `model` loaded with the caller's engine (never unloaded: its owner is the caller's).
  void attach(ServedModel& model, LoadedModel loaded);
  // Loads `model` now on the calling thread, unloading others first when the limits want it (startup preloads).
  Status load(ServedModel& model);

  // A lease on the model's backend when it is loaded now (the request counts as a use for the LRU order), else null.
  std::shared_ptr<const Backend> try_acquire(ServedModel& model);
  // Loads the model (unless it is loaded by then) and calls `done` with a lease, on the loader thread, or at once with
  // a 503 when only Server::attach can bring it in. Errors are API errors: 503 when the limits leave no room in time,
  // 500 when the load fails, with its message.
  using Acquired = std::function<void(ApiResult<std::shared_ptr<const Backend>>)>;
  void load_then(ServedModel& model, Acquired done);
  // The backend when loaded now, without loading or touching the LRU order (metrics, health).
  std::shared_ptr<const Backend> loaded(const ServedModel& model) const;

  // kairo:model_load_seconds (histogram), kairo:model_loaded (gauge), kairo:model_loads_total and
  // kairo:model_unloads_total (counters), kairo:model_memory_bytes (gauge: the footprint while loaded), each labelled
  // model_name. Empty while only attach() brought models in (nothing to switch).
  std::string render_metrics() const;
  uint64_t n_unloads(const ServedModel& model) const;

  // Stops the loader (its waiters get 503 shutting_down) and unloads every model it loaded, on the calling thread,
  // waiting up to `deadline` for requests' leases to end. The server calls it once its requests are done: a job may
  // hold the server's context past the Server, and the context's last reference dropped on an engine's thread
  // would destroy that engine there (an engine cannot join its own thread). A model still leased at the deadline is
  // left to the process's exit, never destroyed under its request. Idempotent.
  void shutdown(std::chrono::steady_clock::time_point deadline);

 private:
  struct Slot {
    std::shared_ptr<Backend> backend;  // the registry's reference; use_count() == 1: idle
    bool loading = false;
    std::chrono::steady_clock::time_point last_used;
    std::vector<Acquired> waiters;
    uint64_t n_loads = 0;
    uint64_t n_unloads = 0;
    std::unique_ptr<Histogram> load_seconds;  // a pointer: Histogram holds a mutex, and slots_ grows in add()
  };

  Slot& slot(const ServedModel& model);
  const Slot& slot(const ServedModel& model) const;
  std::shared_ptr<Backend> make_backend(ServedModel& model, LoadedModel loaded);
  // Unloads least-recently-used idle models until `model` fits; waits for one to become idle up to the deadline.
  // Called with the lock held; returns with it held. The unloaded backends go to `evicted`, released unlocked.
  ApiResult<bool> make_room(std::unique_lock<std::mutex>& lock, const ServedModel& model,
                            std::vector<std::shared_ptr<Backend>>& evicted);
  ApiResult<std::shared_ptr<const Backend>> load_now(ServedModel& model);
  void loader_main();

  std::string metrics_prefix_;
  ModelLimits limits_;
  std::vector<std::unique_ptr<ServedModel>> models_;
  std::mutex load_mutex_;  // one load at a time, startup's load() and the loader thread's alike
  mutable std::mutex mutex_;
  std::condition_variable cv_;  // the loader's queue
  std::vector<Slot> slots_;     // by the model's place in models_
  std::deque<ServedModel*> queue_;
  bool stopping_ = false;
  std::thread loader_;  // last: started once everything it reads exists
};

}  // namespace kairo::server
