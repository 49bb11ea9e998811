#pragma once
// The LoRA adapters the server serves by name: those of --lora, then those POST /v1/load_lora_adapter adds, each
// with its engine id and load generation (engine::Request::adapter / adapter_generation), in the order they came.
// Requests resolve names here; /v1/models lists from here, so a load or an unload shows at once. Thread-safe.
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace kairo::server {

struct ServedAdapter {
  std::string name;
  int id = 0;               // the engine's adapter id (1, 2, ...); llama-server's `lora` ids are id - 1
  uint64_t generation = 0;  // 0 for --lora adapters
};

class LoraRegistry {
 public:
  // The --lora adapters: names[i] is the engine's adapter i + 1, as `kairo serve` loads them.
  explicit LoraRegistry(const std::vector<std::string>& startup_names);

  std::optional<ServedAdapter> find(const std::string& name) const;
  std::optional<ServedAdapter> find_id(int id) const;
  std::vector<ServedAdapter> list() const;

  // A load under way holds its name, so two loads of one name cannot both succeed: false when the name is served or
  // being loaded already. Then commit (served from now on) or cancel.
  bool reserve(const std::string& name);
  void commit(const std::string& name, int id, uint64_t generation);
  void cancel(const std::string& name);
  // Stops serving `name`; what it was, or nullopt when it is not served.
  std::optional<ServedAdapter> remove(const std::string& name);

 private:
  mutable std::mutex mutex_;
  std::vector<ServedAdapter> served_;
  std::vector<std::string> reserved_;
};

}  // namespace kairo::server
