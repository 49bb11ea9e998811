#pragma once
// Stop strings across token boundaries: text is released only once it can no longer be the start of a stop
// string, and the stop string itself is never released.
#include <string>
#include <vector>

namespace kairo::engine {

class StopMatcher {
 public:
  explicit StopMatcher(std::vector<std::string> stop_strings);

  // Feeds new text; returns the text that is safe to emit now. After a match, stopped() is true, the text before
  // the stop string is returned, and further input is ignored.
  std::string push(const std::string& text);
  // Releases any held-back text (at the end of generation without a match).
  std::string flush();

  bool stopped() const { return !matched_.empty(); }
  const std::string& matched() const { return matched_; }

 private:
  std::vector<std::string> stops_;
  size_t max_len_ = 0;
  std::string held_;
  std::string matched_;
};

}  // namespace kairo::engine
