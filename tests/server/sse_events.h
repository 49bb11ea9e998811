#pragma once
// Named server-sent events ("event: NAME\ndata: JSON\n\n"), as Anthropic's Messages and OpenAI's Responses stream
// them, read back for tests: each event's data must parse and repeat its name as "type".
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kairo::server::testing {

struct SseEvent {
  std::string name;
  nlohmann::json data;
};

inline std::vector<SseEvent> parse_sse_events(const std::string& sse) {
  std::vector<SseEvent> out;
  size_t pos = 0;
  while (pos < sse.size()) {
    const size_t end = sse.find("\n\n", pos);
    EXPECT_NE(end, std::string::npos) << "an unterminated event: " << sse.substr(pos);
    if (end == std::string::npos) break;
    const std::string block = sse.substr(pos, end - pos);
    pos = end + 2;
    const size_t nl = block.find('\n');
    EXPECT_EQ(block.rfind("event: ", 0), 0u) << block;
    EXPECT_EQ(block.compare(nl + 1, 6, "data: "), 0) << block;
    SseEvent e{block.substr(7, nl - 7), nlohmann::json::parse(block.substr(nl + 7))};
    EXPECT_EQ(e.data["type"], e.name) << block;
    out.push_back(std::move(e));
  }
  return out;
}

inline std::vector<std::string> sse_event_names(const std::vector<SseEvent>& events) {
  std::vector<std::string> names;
  for (const auto& e : events) names.push_back(e.name);
  return names;
}

}  // namespace kairo::server::testing
