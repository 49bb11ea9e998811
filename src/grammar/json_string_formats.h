#pragma once
// GBNF for the string formats JSON Schema names (the content between the quotes). Each accepts only strings a
// strict checker accepts: dates have the right number of days per month (February stops at 28, so no leap-year
// arithmetic is needed for a date to be valid), times have seconds 00-59 and an RFC 3339 offset.
#include <optional>
#include <string>

namespace kairo::grammar {

// nullopt for a format this engine does not know.
std::optional<std::string> string_format_gbnf(const std::string& format);

// The formats string_format_gbnf knows, for error messages.
const char* supported_string_formats();

}  // namespace kairo::grammar
