// LoRA adapters while the engine serves (docs/lora.md): loads and unloads from any thread, per-request scales. The
// model's adapter set (model::lora::LoraSet) is read by every step, so only the engine thread changes it, and only
// between steps: a load reads and checks the file on the caller's thread, then queues the upload; an unload only
// marks the id (AdapterSlots) and the engine thread frees it once no request holds it. Ids are never renumbered, and
// a freed one is reused by a later load.
#include <cmath>
#include <cstring>
#include <future>

#include "core/format.h"
#include "engine/engine.h"

namespace kairo::engine {

std::variant<LoadedAdapter, AdapterRefusal> Engine::load_adapter(const std::string& path, float scale) {
  if (!(std::isfinite(scale) && scale >= 0.0f)) {
    return AdapterRefusal{AdapterError::Invalid,
                          strprintf("the scale %g is not a finite number >= 0", static_cast<double>(scale))};
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!failure_.empty()) return AdapterRefusal{AdapterError::Unavailable, failure_};
    if (!accepting_) return AdapterRefusal{AdapterError::Unavailable, "the server is shutting down"};
    if (auto why = adapter_slots_.reserve_load()) return AdapterRefusal{AdapterError::Full, std::move(*why)};
  }
  // Reading, checking and encoding the file is the slow part: here, on the caller's thread (the model's file and
  // config do not change); the engine thread only uploads.
  model::lora::LoadOptions options;
  options.scale = scale;
  options.max_rank = config_.max_lora_rank;
  auto adapter = model::lora::load_adapter(path, model_.file(), model_.config(), options);
  Result<model::lora::PreparedAdapter> prepared = Error{""};
  if (adapter.ok()) {
    prepared = model::lora::prepare_adapter(*adapter, model_.config());
  } else {
    prepared = adapter.error();
  }
  auto done = std::make_shared<std::promise<Result<LoadedAdapter>>>();
  std::future<Result<LoadedAdapter>> loaded = done->get_future();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!prepared.ok() || stop_) {
      adapter_slots_.cancel_load();
      if (!prepared.ok()) return AdapterRefusal{AdapterError::Invalid, prepared.error().message};
      return AdapterRefusal{AdapterError::Unavailable, "the server is shutting down"};
    }
    const uint64_t bytes = prepared->matrices->device_bytes;
    if (auto why = adapter_slots_.reserve_bytes(bytes, lora_budget_advice())) {
      adapter_slots_.cancel_load();
      return AdapterRefusal{AdapterError::Full, std::move(*why)};
    }
    adapter_commands_.push_back(
        {0, std::make_shared<model::lora::PreparedAdapter>(std::move(*prepared)), done, bytes});
  }
  wake_.notify_one();
  try {
    Result<LoadedAdapter> result = loaded.get();  // the engine thread answers between two steps
    if (!result.ok()) return AdapterRefusal{AdapterError::Invalid, result.error().message};
    return *result;
  } catch (const std::future_error&) {  // the engine thread dropped the load: an invariant broke while it ran
    return AdapterRefusal{AdapterError::Unavailable, "the engine failed while loading the adapter"};
  }
}

std::variant<int, AdapterRefusal> Engine::unload_adapter(int id, uint64_t generation) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto unloaded = adapter_slots_.unload(id, generation);
  if (auto* why = std::get_if<std::string>(&unloaded)) return AdapterRefusal{AdapterError::NotLoaded, std::move(*why)};
  const int n_holding = std::get<int>(unloaded);
  if (n_holding == 0) {
    adapter_commands_.push_back({id, nullptr, nullptr});  // before any later load's upload: FIFO
    wake_.notify_one();
  }
  return n_holding;
}

void Engine::run_adapter_commands() {
  std::vector<AdapterCommand> commands;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    commands.swap(adapter_commands_);
  }
  for (AdapterCommand& c : commands) {
    if (c.free_id > 0) {
      model_.remove_adapter(c.free_id);
      std::lock_guard<std::mutex> lock(mutex_);
      adapter_slots_.freed(c.free_id);
      continue;
    }
    // Below first_scaled_index_ there is always a free index: the load reserved room among max_loras ids.
    Result<int> idx = model_.add_adapter(std::move(*c.adapter));
    Result<LoadedAdapter> answer = Error{""};
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!idx.ok()) {
        adapter_slots_.cancel_load(c.bytes);
        answer = Error{idx.error().message};
      } else {
        answer = LoadedAdapter{*idx, adapter_slots_.finish_load(*idx, c.bytes)};
      }
    }
    c.done->set_value(std::move(answer));
  }
}

std::string Engine::lora_budget_advice() const {
  return strprintf("kairo serve reserves room for --max-loras %d adapters of rank up to --max-lora-rank %d in F16 "
                   "(docs/lora.md): unload an adapter first, or restart with a larger --max-lora-rank or --max-loras",
                   config_.max_loras, config_.max_lora_rank);
}

std::optional<std::string> Engine::refuse_adapter(const Request& request) const {
  if (request.adapter < 0) return strprintf("LoRA adapter %d is not loaded", request.adapter);
  return adapter_slots_.refuse_request(request.adapter, request.adapter_generation);
}

void Engine::attach_adapter(Sequence& seq) {
  const Request& r = seq.request;
  if (r.adapter == 0) return;
  int index = r.adapter;
  const model::lora::LoraSet& set = model_.adapters();
  if (r.adapter_scale) {
    uint32_t wanted = 0, loaded = 0;
    std::memcpy(&wanted, &*r.adapter_scale, sizeof wanted);
    std::memcpy(&loaded, &set.at(r.adapter).user_scale, sizeof loaded);
    if (wanted != loaded) {
      if (std::optional<int> shared = scaled_adapters_.acquire(r.adapter, *r.adapter_scale)) {
        index = *shared;
      } else {
        index = model_.add_rescaled_adapter(r.adapter, *r.adapter_scale, first_scaled_index_);
        scaled_adapters_.add(r.adapter, *r.adapter_scale, index);
      }
    }
  }
  seq.lora_index = index;
  // KV computed under an adapter is that adapter's (file content and scale) alone.
  seq.kv_salt += std::string("\0lora:", 6) +
                 strprintf("%016llx", static_cast<unsigned long long>(set.at(index).identity));
}

void Engine::release_adapter(Sequence& seq) {
  const int id = seq.request.adapter;
  if (id == 0) return;
  if (seq.lora_index != id && seq.lora_index != 0 && scaled_adapters_.release(seq.lora_index)) {
    model_.remove_adapter(seq.lora_index);
  }
  seq.lora_index = 0;
  bool free_now = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    free_now = adapter_slots_.release(id);
  }
  if (!free_now) return;  // held by other requests, or still loaded
  model_.remove_adapter(id);
  std::lock_guard<std::mutex> lock(mutex_);
  adapter_slots_.freed(id);
}

}  // namespace kairo::engine
