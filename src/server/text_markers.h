#pragma once
// Helpers of the streaming parsers that look for markers (`<think>`, `</tool_call>`) in text arriving in pieces.
#include <algorithm>
#include <string_view>

namespace kairo::server {

inline bool is_blank(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

inline bool all_blank(std::string_view s) { return std::all_of(s.begin(), s.end(), is_blank); }

// The length of the longest suffix of `s` that is a proper prefix of `marker`: text to hold back, since the next
// piece may complete the marker.
inline size_t partial_marker_suffix(std::string_view s, std::string_view marker) {
  for (size_t n = std::min(s.size(), marker.size() - 1); n > 0; --n) {
    if (s.substr(s.size() - n) == marker.substr(0, n)) return n;
  }
  return 0;
}

}  // namespace kairo::server
