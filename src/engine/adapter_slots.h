#pragma once
// The engine's LoRA bookkeeping, apart from the matrices (model::lora::LoraSet holds those, at the same indices):
// which adapter ids new requests may use, how many requests hold each, and which LoraSet index runs an adapter at a
// per-request scale. Plain counters, so loading, unloading and reuse are tested without a model.
//
// An id is Loaded (new requests may use it), Unloading (unloaded while requests held it: no new ones may start, and
// it is freed when the last one finishes, which runs to its end under it), Freeing (unloaded with none holding it:
// the engine thread frees it before it runs anything else) or Free. A load reserves room before it reads the file,
// so at most max_loaded ids are Loaded, Unloading or being loaded at once. Each load gets a new generation: a request
// carries the generation it resolved its adapter name to, so an id unloaded and reused since is refused, not run
// under the adapter that now has it.
//
// Bytes: with a byte budget (`kairo serve` reserves it from its memory budget: plan/adapter_memory.h), the device
// bytes of every Loaded and Unloading id and of the loads under way stay within it. A Freeing id's bytes are free
// for a new load already: the engine runs its queued frees and uploads in order, so the free comes first. A load
// reserves its bytes (reserve_bytes) once the file is read, before the upload.
#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace kairo::engine {

class AdapterSlots {
 public:
  enum class State { Free, Loaded, Unloading, Freeing };

  // `loaded`: the ids the model has when the engine starts (Loaded, generation 0), taking loaded_bytes[i] device
  // bytes each (none given: 0). max_loaded: the most ids Loaded, Unloading or being loaded at once (0: as many as
  // `loaded` holds, and no loads). max_bytes: the budget of device bytes of all of them (0: none).
  AdapterSlots(const std::vector<int>& loaded, int max_loaded, uint64_t max_bytes = 0,
               const std::vector<uint64_t>& loaded_bytes = {});

  // Why a new request may not use adapter `id` of `generation`; nullopt when it may (id 0, the base, always may).
  std::optional<std::string> refuse_request(int id, uint64_t generation) const;
  void acquire(int id);  // a request submitted with id (> 0) holds it until release
  // A request let go of id; true when it was the last one of an Unloading id: the caller frees the id now, then
  // calls freed().
  bool release(int id);

  // Room for one more adapter: nullopt, or why not (max_loaded reached).
  std::optional<std::string> reserve_load();
  // The reserved load's adapter takes `bytes` on the device: nullopt when they fit the byte budget (and are now
  // reserved), or why not. `why_budget` ends the refusal: what the budget is made of and which flags set it.
  std::optional<std::string> reserve_bytes(uint64_t bytes, const std::string& why_budget);
  // Drops the reserved load, and the bytes it reserved.
  void cancel_load(uint64_t bytes = 0);
  // The reserved load put its adapter, of `bytes` reserved, at `id` (a Free id): Loaded from now on. Returns the
  // load's generation.
  uint64_t finish_load(int id, uint64_t bytes = 0);

  // New requests may no longer use id. Returns how many requests hold it (the id is then Unloading, or Freeing when
  // none: the caller has it freed on the engine thread, then calls freed()), or why it cannot be unloaded.
  std::variant<int, std::string> unload(int id, uint64_t generation);
  void freed(int id);

  State state(int id) const;
  int n_requests(int id) const;
  int n_resident() const;  // Loaded + Unloading + loads under way
  int max_loaded() const { return max_loaded_; }
  uint64_t resident_bytes() const;  // of Loaded and Unloading ids and of loads under way
  uint64_t max_bytes() const { return max_bytes_; }

 private:
  struct Slot {
    State state = State::Free;
    uint64_t generation = 0;
    int n_requests = 0;
    uint64_t bytes = 0;  // on the device, until freed
  };
  const Slot* find(int id) const;
  Slot& slot(int id);  // grows the table to id
  int n_loaded() const;

  std::vector<Slot> slots_;  // [id - 1]
  int max_loaded_ = 0;
  int n_loading_ = 0;
  uint64_t loading_bytes_ = 0;
  uint64_t max_bytes_ = 0;
  uint64_t next_generation_ = 1;
};

// Per-request scales (Request::adapter_scale): the LoraSet index that runs adapter `id` at `scale`, shared by the
// requests that ask for the same pair, made when the first arrives and freed when the last finishes.
class ScaledAdapters {
 public:
  // The index already running (id, scale), now held by one more request; nullopt when there is none.
  std::optional<int> acquire(int id, float scale);
  // A new index for (id, scale), held by one request.
  void add(int id, float scale, int index);
  // One request let go of index; true when none holds it any more: the caller frees the index.
  bool release(int index);
  bool holds(int index) const;
  size_t size() const { return entries_.size(); }

 private:
  struct Entry {
    int id;
    uint32_t scale_bits;
    int index;
    int n_requests;
  };
  std::vector<Entry> entries_;
};

}  // namespace kairo::engine
