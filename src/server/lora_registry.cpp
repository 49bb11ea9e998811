#include "server/lora_registry.h"

#include <algorithm>

namespace kairo::server {

LoraRegistry::LoraRegistry(const std::vector<std::string>& startup_names) {
  for (size_t i = 0; i < startup_names.size(); ++i) served_.push_back({startup_names[i], static_cast<int>(i) + 1, 0});
}

std::optional<ServedAdapter> LoraRegistry::find(const std::string& name) const {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto it = std::find_if(served_.begin(), served_.end(), [&](const ServedAdapter& a) { return a.name == name; });
  if (it == served_.end()) return std::nullopt;
  return *it;
}

std::optional<ServedAdapter> LoraRegistry::find_id(int id) const {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto it = std::find_if(served_.begin(), served_.end(), [&](const ServedAdapter& a) { return a.id == id; });
  if (it == served_.end()) return std::nullopt;
  return *it;
}

std::vector<ServedAdapter> LoraRegistry::list() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return served_;
}

bool LoraRegistry::reserve(const std::string& name) {
  std::lock_guard<std::mutex> lock(mutex_);
  const bool served =
      std::any_of(served_.begin(), served_.end(), [&](const ServedAdapter& a) { return a.name == name; });
  if (served || std::find(reserved_.begin(), reserved_.end(), name) != reserved_.end()) return false;
  reserved_.push_back(name);
  return true;
}

void LoraRegistry::commit(const std::string& name, int id, uint64_t generation) {
  std::lock_guard<std::mutex> lock(mutex_);
  reserved_.erase(std::remove(reserved_.begin(), reserved_.end(), name), reserved_.end());
  served_.push_back({name, id, generation});
}

void LoraRegistry::cancel(const std::string& name) {
  std::lock_guard<std::mutex> lock(mutex_);
  reserved_.erase(std::remove(reserved_.begin(), reserved_.end(), name), reserved_.end());
}

std::optional<ServedAdapter> LoraRegistry::remove(const std::string& name) {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto it = std::find_if(served_.begin(), served_.end(), [&](const ServedAdapter& a) { return a.name == name; });
  if (it == served_.end()) return std::nullopt;
  ServedAdapter out = *it;
  served_.erase(it);
  return out;
}

}  // namespace kairo::server
