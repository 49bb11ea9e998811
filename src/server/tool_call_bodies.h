#pragma once
// The body of a tool call, once its markers have been found, read into name + arguments for each format of
// tool_call_format.h. A body that is not a well-formed call gives nullopt: the streaming parser then returns the
// text as content, as the model wrote it.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace kairo::server {

struct ParsedToolCall {
  std::string name;
  std::string arguments;  // JSON text, compact
};

// {"name": string, "arguments" | "parameters": object} (Hermes, Llama-3.x; no arguments key means {}).
std::optional<ParsedToolCall> parse_json_call(std::string_view text);
// A non-empty JSON array of such objects (Mistral).
std::optional<std::vector<ParsedToolCall>> parse_json_call_array(std::string_view text);
// What stands between <｜tool▁calls▁begin｜> and <｜tool▁calls▁end｜>: one or more
// <｜tool▁call▁begin｜>...<｜tool▁call▁end｜>, blanks between them.
std::optional<std::vector<ParsedToolCall>> parse_deepseek_calls(std::string_view body);
// What stands between <tool_call> and </tool_call> in Qwen3-Coder's XML. `tools` (the request's, or null) gives
// each parameter's schema: raw text for string parameters (xml_value_is_raw_text), JSON for the others (text
// when it does not parse); a parameter no tool declares stays text, as vLLM reads it.
std::optional<ParsedToolCall> parse_xml_call(std::string_view body, const nlohmann::ordered_json* tools);

// Whether an XML parameter of this schema is written as raw text rather than JSON: a string (or string-or-null)
// type, or an enum/const of strings only.
bool xml_value_is_raw_text(const nlohmann::ordered_json& parameter_schema);

}  // namespace kairo::server
