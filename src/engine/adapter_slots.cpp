#include "engine/adapter_slots.h"

#include <algorithm>
#include <cstring>

#include "core/check.h"
#include "core/format.h"

namespace kairo::engine {
namespace {

uint32_t bits_of(float f) {
  uint32_t b = 0;
  std::memcpy(&b, &f, sizeof b);
  return b;
}

}  // namespace

AdapterSlots::AdapterSlots(const std::vector<int>& loaded, int max_loaded, uint64_t max_bytes,
                           const std::vector<uint64_t>& loaded_bytes) {
  for (size_t i = 0; i < loaded.size(); ++i) {
    Slot& s = slot(loaded[i]);
    s.state = State::Loaded;
    s.bytes = i < loaded_bytes.size() ? loaded_bytes[i] : 0;
  }
  max_loaded_ = max_loaded > 0 ? max_loaded : static_cast<int>(loaded.size());
  max_bytes_ = max_bytes;
}

const AdapterSlots::Slot* AdapterSlots::find(int id) const {
  return id >= 1 && id <= static_cast<int>(slots_.size()) ? &slots_[static_cast<size_t>(id - 1)] : nullptr;
}

AdapterSlots::Slot& AdapterSlots::slot(int id) {
  KAIRO_CHECK(id >= 1, "adapter id %d", id);
  if (static_cast<int>(slots_.size()) < id) slots_.resize(static_cast<size_t>(id));
  return slots_[static_cast<size_t>(id - 1)];
}

int AdapterSlots::n_loaded() const {
  return static_cast<int>(std::count_if(slots_.begin(), slots_.end(), [](const Slot& s) { return s.state == State::Loaded; }));
}

std::optional<std::string> AdapterSlots::refuse_request(int id, uint64_t generation) const {
  if (id == 0) return std::nullopt;
  const Slot* s = find(id);
  if (s != nullptr && s->state == State::Unloading) {
    return strprintf("LoRA adapter %d is being unloaded: it takes no new requests", id);
  }
  if (s == nullptr || s->state != State::Loaded) {
    return strprintf("LoRA adapter %d is not loaded (%d are)", id, n_loaded());
  }
  if (s->generation != generation) {
    return strprintf("LoRA adapter %d was unloaded since this request named it; the id now holds another adapter", id);
  }
  return std::nullopt;
}

void AdapterSlots::acquire(int id) {
  if (id == 0) return;
  Slot& s = slot(id);
  KAIRO_CHECK(s.state == State::Loaded, "a request acquires adapter %d, which is not loaded", id);
  ++s.n_requests;
}

bool AdapterSlots::release(int id) {
  if (id == 0) return false;
  Slot& s = slot(id);
  KAIRO_CHECK(s.n_requests > 0, "a request releases adapter %d, which no request holds", id);
  --s.n_requests;
  if (s.n_requests > 0 || s.state != State::Unloading) return false;
  s.state = State::Freeing;
  return true;
}

std::optional<std::string> AdapterSlots::reserve_load() {
  if (n_resident() >= max_loaded_) {
    const int n_unloading = static_cast<int>(
        std::count_if(slots_.begin(), slots_.end(), [](const Slot& s) { return s.state == State::Unloading; }));
    return strprintf("%d LoRA adapters are loaded%s, the most this server holds at once (--max-loras %d); unload one "
                     "first, or restart with a larger --max-loras",
                     n_resident(),
                     n_unloading > 0 ? strprintf(" (%d of them unloaded but still finishing requests)", n_unloading).c_str()
                                     : "",
                     max_loaded_);
  }
  ++n_loading_;
  return std::nullopt;
}

std::optional<std::string> AdapterSlots::reserve_bytes(uint64_t bytes, const std::string& why_budget) {
  KAIRO_CHECK(n_loading_ > 0, "bytes reserved for a load that was never reserved");
  const uint64_t resident = resident_bytes();
  if (max_bytes_ > 0 && resident + bytes > max_bytes_) {
    const uint64_t left = max_bytes_ > resident ? max_bytes_ - resident : 0;
    return strprintf("this LoRA adapter takes %s of device memory but only %s of the %s reserved for LoRA adapters "
                     "is free (%s held by the adapters loaded or loading); %s",
                     human_bytes(bytes).c_str(), human_bytes(left).c_str(), human_bytes(max_bytes_).c_str(),
                     human_bytes(resident).c_str(), why_budget.c_str());
  }
  loading_bytes_ += bytes;
  return std::nullopt;
}

void AdapterSlots::cancel_load(uint64_t bytes) {
  KAIRO_CHECK(n_loading_ > 0, "a load was cancelled that was never reserved");
  KAIRO_CHECK(loading_bytes_ >= bytes, "a load cancelled %llu bytes it never reserved",
              static_cast<unsigned long long>(bytes));
  --n_loading_;
  loading_bytes_ -= bytes;
}

uint64_t AdapterSlots::finish_load(int id, uint64_t bytes) {
  KAIRO_CHECK(n_loading_ > 0, "a load finished that was never reserved");
  KAIRO_CHECK(loading_bytes_ >= bytes, "a load finished with %llu bytes it never reserved",
              static_cast<unsigned long long>(bytes));
  Slot& s = slot(id);
  KAIRO_CHECK(s.state == State::Free && s.n_requests == 0, "a load put its adapter at id %d, which is not free", id);
  --n_loading_;
  loading_bytes_ -= bytes;
  s.bytes = bytes;
  s.state = State::Loaded;
  s.generation = next_generation_++;
  return s.generation;
}

std::variant<int, std::string> AdapterSlots::unload(int id, uint64_t generation) {
  const Slot* found = find(id);
  if (found == nullptr || found->state != State::Loaded || found->generation != generation) {
    return strprintf("LoRA adapter %d is not loaded", id);
  }
  Slot& s = slot(id);
  s.state = s.n_requests > 0 ? State::Unloading : State::Freeing;
  return s.n_requests;
}

void AdapterSlots::freed(int id) {
  Slot& s = slot(id);
  KAIRO_CHECK(s.state == State::Freeing && s.n_requests == 0, "adapter %d was freed while in use", id);
  s.state = State::Free;
  s.bytes = 0;
}

AdapterSlots::State AdapterSlots::state(int id) const {
  const Slot* s = find(id);
  return s ? s->state : State::Free;
}

int AdapterSlots::n_requests(int id) const {
  const Slot* s = find(id);
  return s ? s->n_requests : 0;
}

int AdapterSlots::n_resident() const {
  const int n = static_cast<int>(std::count_if(slots_.begin(), slots_.end(), [](const Slot& s) {
    return s.state == State::Loaded || s.state == State::Unloading;
  }));
  return n + n_loading_;
}

uint64_t AdapterSlots::resident_bytes() const {
  uint64_t n = loading_bytes_;
  for (const Slot& s : slots_) {
    if (s.state == State::Loaded || s.state == State::Unloading) n += s.bytes;
  }
  return n;
}

std::optional<int> ScaledAdapters::acquire(int id, float scale) {
  for (Entry& e : entries_) {
    if (e.id == id && e.scale_bits == bits_of(scale)) {
      ++e.n_requests;
      return e.index;
    }
  }
  return std::nullopt;
}

void ScaledAdapters::add(int id, float scale, int index) {
  KAIRO_CHECK(!holds(index), "LoRA index %d already runs a scaled adapter", index);
  entries_.push_back({id, bits_of(scale), index, 1});
}

bool ScaledAdapters::release(int index) {
  const auto it = std::find_if(entries_.begin(), entries_.end(), [index](const Entry& e) { return e.index == index; });
  KAIRO_CHECK(it != entries_.end() && it->n_requests > 0, "a request releases scaled adapter index %d, which none holds",
              index);
  if (--it->n_requests > 0) return false;
  entries_.erase(it);
  return true;
}

bool ScaledAdapters::holds(int index) const {
  return std::any_of(entries_.begin(), entries_.end(), [index](const Entry& e) { return e.index == index; });
}

}  // namespace kairo::engine
