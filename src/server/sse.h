#pragma once
// Server-sent events framing as OpenAI streams it: each JSON payload as one `data:` event, then `data: [DONE]`.
#include <string>

namespace kairo::server {

inline std::string sse_event(const std::string& json_payload) { return "data: " + json_payload + "\n\n"; }
inline constexpr const char* kSseDone = "data: [DONE]\n\n";

}  // namespace kairo::server
