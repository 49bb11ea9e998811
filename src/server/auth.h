#pragma once
// API keys: `Authorization: Bearer <key>` checked against every configured key in time that does not depend on
// where (or whether) the strings differ, so response timing leaks nothing about a key.
#include <string>
#include <vector>

#include "core/result.h"

namespace kairo::server {

// Keys from a file: one per line; blank lines and lines starting with '#' skipped; surrounding whitespace trimmed.
Result<std::vector<std::string>> load_api_key_file(const std::string& path);

// True when `a` equals `b`; runs over max(len) bytes regardless of content.
bool constant_time_equals(const std::string& a, const std::string& b);

// True when the Authorization header value carries one of the keys (or no keys are configured).
bool authorized(const std::vector<std::string>& keys, const std::string& authorization_header);

}  // namespace kairo::server
