#pragma once
// Identities of generated objects: random ids behind each API's prefix ("chatcmpl-", "msg_", "resp_", "call_",
// "toolu_") and the creation time clients are shown.
#include <cstdint>
#include <string>
#include <string_view>

namespace kairo::server {

// `prefix` then n_chars random lowercase hex digits.
std::string random_hex_id(std::string_view prefix, size_t n_chars = 24);
// `prefix` then n_chars random letters and digits (Anthropic's "msg_01…" and "toolu_01…" look like this).
std::string random_alnum_id(std::string_view prefix, size_t n_chars = 24);
// Seconds since the Unix epoch.
int64_t unix_now();

}  // namespace kairo::server
