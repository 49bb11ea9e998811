#pragma once
// Server-sent events framing. OpenAI's chat and completions stream each JSON payload as one unnamed `data:` event,
// then `data: [DONE]`; Anthropic's Messages and OpenAI's Responses name every event (`event: message_start`),
// and their clients dispatch on that name.
#include <string>
#include <string_view>

namespace kairo::server {

inline std::string sse_event(const std::string& json_payload) { return "data: " + json_payload + "\n\n"; }
inline std::string sse_named_event(std::string_view name, const std::string& json_payload) {
  return "event: " + std::string(name) + "\ndata: " + json_payload + "\n\n";
}
inline constexpr const char* kSseDone = "data: [DONE]\n\n";

}  // namespace kairo::server
