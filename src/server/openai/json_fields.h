#pragma once
// Typed reads of request fields with OpenAI-style errors that name the field, what was expected and what came.
// A field that is absent or null leaves `out` unchanged (clients send null for "unset"). Each returns the error,
// or nullopt when the field is fine.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "server/api_error.h"

namespace kairo::server::json_fields {

using json = nlohmann::ordered_json;
using MaybeError = std::optional<ApiError>;

// "a string", "an array", ... for messages.
const char* kind_of(const json& value);
// A short rendering of a bad value for an error message (long strings and containers cut).
std::string preview(const json& value);

bool present(const json& obj, const char* key);

// Deepest [ / { nesting of JSON text, counted without parsing (strings and escapes skipped); stops counting once
// past stop_above, so hostile input costs one linear scan.
int json_nesting_depth(const std::string& text, int stop_above);  // present and not null

MaybeError get_bool(const json& obj, const char* key, const std::string& param, bool& out);
// Integers; a float with no fractional part (3.0) is accepted, as OpenAI's own validation does.
MaybeError get_int(const json& obj, const char* key, const std::string& param, int64_t min, int64_t max,
                   int64_t& out);
MaybeError get_int(const json& obj, const char* key, const std::string& param, int64_t min, int64_t max, int& out);
MaybeError get_number(const json& obj, const char* key, const std::string& param, double min, double max,
                      float& out);
MaybeError get_string(const json& obj, const char* key, const std::string& param, size_t max_bytes,
                      std::string& out);

// A field that must be there and be a string (absent or null is an error, unlike get_string).
MaybeError required_string(const json& obj, const char* key, const std::string& param, std::string& out);

// Content that is a string, or an array of typed parts whose texts are joined with newlines: `part_text` gives
// the text of one part of type `type`, or the error when the API does not take that type. Shared by the chat
// messages, the Responses input items and their function-call outputs.
using PartText = std::function<MaybeError(const json& part, const std::string& part_param, const std::string& type,
                                          std::string& text)>;
MaybeError joined_text_parts(const json& content, const std::string& param, const PartText& part_text,
                             std::string& out);

// Checks `value` is an integer in [min, max] (used for array elements).
MaybeError check_int_value(const json& value, const std::string& param, int64_t min, int64_t max, int64_t& out);

}  // namespace kairo::server::json_fields

// Returns the error of a field read from the enclosing function.
#define KAIRO_API_TRY(expr)                  \
  do {                                       \
    if (auto _kairo_api_err = (expr)) return *_kairo_api_err; \
  } while (0)
