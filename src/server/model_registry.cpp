#include "server/model_registry.h"

#include <algorithm>
#include <cstdio>

#include "core/format.h"

namespace kairo::server {

namespace {

using Clock = std::chrono::steady_clock;

// From a small model's tenth of a second to a large one's minutes from a cold disk.
const std::vector<double> kLoadBuckets = {0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 40, 80, 160, 320};

std::string names_of(const std::vector<const ServedModel*>& models) {
  std::string out;
  for (const ServedModel* m : models) out += (out.empty() ? "" : ", ") + m->info.id;
  return out;
}

}  // namespace

ModelRegistry::ModelRegistry(std::string metrics_prefix) : metrics_prefix_(std::move(metrics_prefix)) {
  loader_ = std::thread([this] { loader_main(); });
}

ModelRegistry::~ModelRegistry() { shutdown(Clock::now()); }

void ModelRegistry::shutdown(Clock::time_point deadline) {
  {
    std::lock_guard lock(mutex_);
    if (stopping_ && !loader_.joinable()) return;
    stopping_ = true;
  }
  cv_.notify_all();
  if (loader_.joinable()) loader_.join();
  std::vector<Acquired> orphaned;
  {
    std::lock_guard lock(mutex_);
    for (Slot& s : slots_) {
      for (auto& w : s.waiters) orphaned.push_back(std::move(w));
      s.waiters.clear();
    }
  }
  for (auto& w : orphaned) w(api_error(503, "the server is shutting down and takes no new requests", "shutting_down"));

  for (size_t i = 0; i < models_.size(); ++i) {
    if (!models_[i]->loader) continue;  // attached: the caller's engine
    std::shared_ptr<Backend> backend;
    {
      std::unique_lock lock(mutex_);
      while (slots_[i].backend && slots_[i].backend.use_count() > 1 && Clock::now() < deadline) {
        cv_.wait_for(lock, std::chrono::milliseconds(10));  // a lease ends without signalling: look again shortly
      }
      backend = std::move(slots_[i].backend);
    }
    if (backend && backend.use_count() > 1) {
      std::fprintf(stderr, "kairo: the model %s still serves a request at shutdown; it is freed with the process\n",
                   models_[i]->info.id.c_str());
      new std::shared_ptr<Backend>(std::move(backend));  // deliberately leaked: see shutdown() in the header
    }
    backend.reset();  // unloaded here: the engine joins its threads and frees its weights
  }
}

ServedModel& ModelRegistry::add(ModelInfo info, uint64_t footprint_bytes, ModelLoader loader) {
  std::lock_guard lock(mutex_);
  models_.push_back(
      std::make_unique<ServedModel>(std::move(info), metrics_prefix_, footprint_bytes, std::move(loader)));
  slots_.emplace_back().load_seconds = std::make_unique<Histogram>(kLoadBuckets);
  return *models_.back();
}

void ModelRegistry::set_limits(ModelLimits limits) {
  std::lock_guard lock(mutex_);
  limits_ = limits;
}

ModelRegistry::Slot& ModelRegistry::slot(const ServedModel& model) {
  for (size_t i = 0; i < models_.size(); ++i) {
    if (models_[i].get() == &model) return slots_[i];
  }
  std::abort();  // a ServedModel of another registry: a programming error
}

const ModelRegistry::Slot& ModelRegistry::slot(const ServedModel& model) const {
  return const_cast<ModelRegistry*>(this)->slot(model);
}

ServedModel* ModelRegistry::find(const std::string& name) {
  if (models_.size() == 1 || name.empty()) return models_.front().get();
  for (const auto& m : models_) {
    if (m->info.id == name) return m.get();
    if (std::find(m->info.aliases.begin(), m->info.aliases.end(), name) != m->info.aliases.end()) return m.get();
  }
  for (const auto& m : models_) {
    if (m->loras.find(name)) return m.get();
  }
  return nullptr;
}

ApiError ModelRegistry::unknown_model(const std::string& name) const {
  std::string served;
  for (const auto& m : models_) {
    served += (served.empty() ? "" : ", ") + quote_for_error(m->info.id, 64);
    for (const auto& alias : m->info.aliases) served += ", " + quote_for_error(alias, 64);
  }
  ApiError e = api_error(404,
                         strprintf("the model %s does not exist; this server serves %s (GET /v1/models lists them)",
                                   quote_for_error(name, 64).c_str(), served.c_str()),
                         "model_not_found");
  e.type = "invalid_request_error";
  e.param = "model";
  return e;
}

std::shared_ptr<Backend> ModelRegistry::make_backend(ServedModel& model, LoadedModel loaded) {
  auto b = std::make_shared<Backend>();
  b->engine = loaded.engine;
  b->tokenizer = loaded.tokenizer;
  b->chat_template = std::move(loaded.chat_template);
  b->template_traits = loaded.template_traits;
  b->model = &model;
  b->owner = std::move(loaded.owner);
  return b;
}

void ModelRegistry::attach(ServedModel& model, LoadedModel loaded) {
  auto backend = make_backend(model, std::move(loaded));
  std::lock_guard lock(mutex_);
  Slot& s = slot(model);
  s.backend = std::move(backend);
  s.last_used = Clock::now();
}

ApiResult<bool> ModelRegistry::make_room(std::unique_lock<std::mutex>& lock, const ServedModel& model,
                                         std::vector<std::shared_ptr<Backend>>& evicted) {
  const auto deadline =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(limits_.wait_s));
  if (limits_.budget_bytes > 0 && model.footprint_bytes > limits_.budget_bytes) {
    return api_error(503,
                     strprintf("the model %s needs %s (the planner's weights, KV cache, activations and "
                               "overhead) but the memory budget is %s; raise --mem-budget-gb or lower "
                               "--max-model-len / --max-num-seqs",
                               model.info.id.c_str(), human_bytes(model.footprint_bytes).c_str(),
                               human_bytes(limits_.budget_bytes).c_str()),
                     "model_too_large");
  }
  for (;;) {
    int n_loaded = 0;
    uint64_t used = 0;
    Slot* victim = nullptr;
    std::vector<const ServedModel*> busy;
    for (size_t i = 0; i < models_.size(); ++i) {
      Slot& s = slots_[i];
      if (!s.backend) continue;
      ++n_loaded;
      used += models_[i]->footprint_bytes;
      const bool idle = s.backend.use_count() == 1 && models_[i]->loader;
      if (!idle) busy.push_back(models_[i].get());
      if (idle && (!victim || s.last_used < victim->last_used)) victim = &s;
    }
    const bool over_count = limits_.max_loaded > 0 && n_loaded + 1 > limits_.max_loaded;
    const bool over_budget = limits_.budget_bytes > 0 && used + model.footprint_bytes > limits_.budget_bytes;
    if (!over_count && !over_budget) return true;
    if (victim) {
      evicted.push_back(std::move(victim->backend));
      ++victim->n_unloads;
      continue;
    }
    if (Clock::now() >= deadline) {
      const std::string why = over_count
                                  ? strprintf("--max-loaded-models is %d", limits_.max_loaded)
                                  : strprintf("the memory budget of %s holds %s of loaded models and %s needs %s more",
                                              human_bytes(limits_.budget_bytes).c_str(), human_bytes(used).c_str(),
                                              model.info.id.c_str(), human_bytes(model.footprint_bytes).c_str());
      ApiError e = api_error(503,
                             strprintf("the model %s cannot be loaded now: %s, and the loaded models (%s) kept "
                                       "serving requests for %.0f s; retry shortly, or raise %s",
                                       model.info.id.c_str(), why.c_str(), names_of(busy).c_str(), limits_.wait_s,
                                       over_count ? "--max-loaded-models" : "--mem-budget-gb"),
                             "model_switch_busy");
      e.headers.emplace_back("Retry-After", "1");
      return e;
    }
    // A lease ends when a request's job is destroyed, which does not signal here: look again shortly.
    cv_.wait_for(lock, std::chrono::milliseconds(20));
    if (stopping_) return api_error(503, "the server is shutting down and takes no new requests", "shutting_down");
  }
}

ApiResult<std::shared_ptr<const Backend>> ModelRegistry::load_now(ServedModel& model) {
  std::vector<std::shared_ptr<Backend>> evicted;
  {
    std::unique_lock lock(mutex_);
    Slot& s = slot(model);
    if (s.backend) {
      s.last_used = Clock::now();
      return std::shared_ptr<const Backend>(s.backend);
    }
    auto room = make_room(lock, model, evicted);
    if (!room.ok()) return room.error();
  }
  evicted.clear();  // unloaded here, unlocked: an engine joins its threads and frees its weights
  const auto start = Clock::now();
  auto loaded = model.loader();
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  if (!loaded.ok()) {
    return api_error(
        500, strprintf("the model %s could not be loaded: %s", model.info.id.c_str(), loaded.error().message.c_str()),
        "model_load_failed");
  }
  auto backend = make_backend(model, std::move(*loaded));
  std::lock_guard lock(mutex_);
  Slot& s = slot(model);
  s.backend = backend;
  s.last_used = Clock::now();
  ++s.n_loads;
  s.load_seconds->observe(seconds);
  return std::shared_ptr<const Backend>(std::move(backend));
}

Status ModelRegistry::load(ServedModel& model) {
  std::lock_guard serial(load_mutex_);
  auto r = load_now(model);
  if (!r.ok()) return Error{r.error().message};
  return Status::success();
}

std::shared_ptr<const Backend> ModelRegistry::try_acquire(ServedModel& model) {
  std::lock_guard lock(mutex_);
  Slot& s = slot(model);
  if (!s.backend) return nullptr;
  s.last_used = Clock::now();
  return s.backend;
}

void ModelRegistry::load_then(ServedModel& model, Acquired done) {
  std::unique_lock lock(mutex_);
  Slot& s = slot(model);
  if (!model.loader) {
    lock.unlock();
    ApiError e =
        api_error(503, "the model is still loading; retry shortly (GET /health turns 200 when ready)", "model_loading");
    e.headers.emplace_back("Retry-After", "1");
    return done(e);
  }
  s.waiters.push_back(std::move(done));
  if (!s.loading) {
    s.loading = true;
    queue_.push_back(&model);
    cv_.notify_all();
  }
}

void ModelRegistry::loader_main() {
  for (;;) {
    ServedModel* model = nullptr;
    {
      std::unique_lock lock(mutex_);
      cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      model = queue_.front();
      queue_.pop_front();
    }
    ApiResult<std::shared_ptr<const Backend>> result = [&] {
      std::lock_guard serial(load_mutex_);
      return load_now(*model);
    }();
    std::vector<Acquired> waiters;
    {
      std::lock_guard lock(mutex_);
      Slot& s = slot(*model);
      s.loading = false;
      waiters.swap(s.waiters);
    }
    for (auto& w : waiters) w(result);
  }
}

std::shared_ptr<const Backend> ModelRegistry::loaded(const ServedModel& model) const {
  std::lock_guard lock(mutex_);
  return slot(model).backend;
}

uint64_t ModelRegistry::n_unloads(const ServedModel& model) const {
  std::lock_guard lock(mutex_);
  return slot(model).n_unloads;
}

std::string ModelRegistry::render_metrics() const {
  std::lock_guard lock(mutex_);
  const bool switching = std::any_of(models_.begin(), models_.end(), [](const auto& m) { return bool(m->loader); });
  if (!switching) return "";
  std::string out;
  auto family = [&](const char* name, const char* type, const char* help, auto sample_of) {
    out += strprintf("# HELP kairo:%s %s\n# TYPE kairo:%s %s\n", name, help, name, type);
    for (size_t i = 0; i < models_.size(); ++i) {
      const std::string labels = "model_name=\"" + escape_metric_label(models_[i]->info.id) + "\"";
      out += sample_of(i, labels);
    }
  };
  auto value = [](const char* name, const std::string& labels, double v) {
    return strprintf("kairo:%s{%s} %s\n", name, labels.c_str(), metric_number(v).c_str());
  };
  family("model_load_seconds", "histogram", "Time to load a model on demand (a model switch), in seconds.",
         [&](size_t i, const std::string& labels) {
           return render_histogram_samples("kairo:model_load_seconds", labels, *slots_[i].load_seconds);
         });
  family("model_loaded", "gauge", "1 while the model is in memory, 0 while it is not.",
         [&](size_t i, const std::string& labels) { return value("model_loaded", labels, slots_[i].backend ? 1 : 0); });
  family("model_memory_bytes", "gauge",
         "The planner's memory for a loaded model (weights, KV cache, activations, overhead); 0 while unloaded.",
         [&](size_t i, const std::string& labels) {
           return value("model_memory_bytes", labels,
                        slots_[i].backend ? static_cast<double>(models_[i]->footprint_bytes) : 0.0);
         });
  family("model_loads_total", "counter", "Loads of the model while serving.", [&](size_t i, const std::string& labels) {
    return value("model_loads_total", labels, static_cast<double>(slots_[i].n_loads));
  });
  family("model_unloads_total", "counter", "Unloads of the model to make room for another.",
         [&](size_t i, const std::string& labels) {
           return value("model_unloads_total", labels, static_cast<double>(slots_[i].n_unloads));
         });
  return out;
}

}  // namespace kairo::server
