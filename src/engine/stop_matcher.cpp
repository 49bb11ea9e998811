#include "engine/stop_matcher.h"

#include <algorithm>

namespace kairo::engine {

StopMatcher::StopMatcher(std::vector<std::string> stop_strings) {
  for (auto& s : stop_strings) {
    if (s.empty()) continue;
    max_len_ = std::max(max_len_, s.size());
    stops_.push_back(std::move(s));
  }
}

std::string StopMatcher::push(const std::string& text) {
  if (stopped()) return {};
  if (stops_.empty()) return text;
  held_ += text;
  // Earliest match wins; on a tie at the same position the longer stop string.
  size_t best = std::string::npos;
  const std::string* best_stop = nullptr;
  for (const auto& s : stops_) {
    const size_t at = held_.find(s);
    if (at != std::string::npos && (at < best || (at == best && s.size() > best_stop->size()))) {
      best = at;
      best_stop = &s;
    }
  }
  if (best_stop) {
    matched_ = *best_stop;
    std::string out = held_.substr(0, best);
    held_.clear();
    return out;
  }
  // Hold back the longest suffix that is a proper prefix of some stop string.
  size_t keep = 0;
  const size_t max_keep = std::min(held_.size(), max_len_ - 1);
  for (size_t k = max_keep; k > 0; --k) {
    const std::string_view tail(held_.data() + held_.size() - k, k);
    const bool is_prefix = std::any_of(stops_.begin(), stops_.end(), [&](const std::string& s) {
      return s.size() > k && std::string_view(s).substr(0, k) == tail;
    });
    if (is_prefix) {
      keep = k;
      break;
    }
  }
  std::string out = held_.substr(0, held_.size() - keep);
  held_.erase(0, held_.size() - keep);
  return out;
}

std::string StopMatcher::flush() {
  std::string out;
  out.swap(held_);
  return out;
}

}  // namespace kairo::engine
