#include "server/access_log.h"

#include <chrono>
#include <mutex>

#include <nlohmann/json.hpp>

namespace kairo::server {

std::string format_access_log(const AccessLogEntry& e, int64_t unix_ms) {
  nlohmann::ordered_json j = {{"ts_ms", unix_ms},       {"request_id", e.request_id}, {"remote", e.remote},
                      {"method", e.method},     {"path", e.path},             {"status", e.status},
                      {"duration_ms", e.duration_ms}};
  if (e.stream) j["stream"] = true;
  if (e.client_disconnected) j["client_disconnected"] = true;
  if (e.prompt_tokens >= 0) j["prompt_tokens"] = e.prompt_tokens;
  if (e.completion_tokens >= 0) j["completion_tokens"] = e.completion_tokens;
  if (!e.error.empty()) j["error"] = e.error;
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

void write_access_log(const AccessLogEntry& entry, std::FILE* out) {
  static std::mutex mutex;
  const int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  const std::string line = format_access_log(entry, now) + "\n";
  std::lock_guard lock(mutex);
  std::fwrite(line.data(), 1, line.size(), out);
  std::fflush(out);
}

}  // namespace kairo::server
