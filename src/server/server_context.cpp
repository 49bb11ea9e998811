#include "server/server_context.h"

namespace kairo::server {

uint64_t InflightJobs::add(std::weak_ptr<GenerationJob> job) {
  std::lock_guard lock(mutex_);
  const uint64_t id = next_id_++;
  jobs_.emplace(id, std::move(job));
  return id;
}

void InflightJobs::remove(uint64_t id) {
  std::lock_guard lock(mutex_);
  jobs_.erase(id);
  if (jobs_.empty()) cv_.notify_all();
}

size_t InflightJobs::size() const {
  std::lock_guard lock(mutex_);
  return jobs_.size();
}

bool InflightJobs::wait_empty(std::chrono::steady_clock::time_point deadline) const {
  std::unique_lock lock(mutex_);
  return cv_.wait_until(lock, deadline, [&] { return jobs_.empty(); });
}

std::vector<std::shared_ptr<GenerationJob>> InflightJobs::snapshot() const {
  std::vector<std::shared_ptr<GenerationJob>> out;
  std::lock_guard lock(mutex_);
  for (const auto& [id, weak] : jobs_) {
    if (auto job = weak.lock()) out.push_back(std::move(job));
  }
  return out;
}

}  // namespace kairo::server
