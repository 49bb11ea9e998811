#pragma once
// What the request-parser tests share (OpenAI chat and Responses, Anthropic Messages, JSON schema): the parse context
// of a server with default limits, and the JSON type the parsers read (ordered: the client's key order is kept, as
// the chat templates see it). Their own namespace: in a unity build these files share a translation unit with tests
// that call nlohmann::json `json`.
#include <nlohmann/json.hpp>

#include "server/openai/parse_request.h"

namespace kairo::server::parsing_test {

using json = nlohmann::ordered_json;

inline const RequestLimits kLimits;
inline const ParseContext kCtx{kLimits, 512};

}  // namespace kairo::server::parsing_test
