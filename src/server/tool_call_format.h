#pragma once
// The ways chat models write tool calls, and which one a chat template teaches its model. Each format's markers
// live here, shared by the parser that reads calls (tool_call_parser.h) and the grammar that forces them
// (tool_grammar.h).
//   Hermes (Qwen2.5, Qwen3, Hermes 2/3 and most templates that mention <tool_call>):
//     text <tool_call>\n{"name": "f", "arguments": {...}}\n</tool_call> <tool_call>...</tool_call>
//   Llama-3.x JSON (Llama 3.1 / 3.2 templates: 'Respond in the format {"name": function name, "parameters": ...}'):
//     the whole reply is {"name": "f", "parameters": {...}}, or several such objects separated by ';'.
//   Mistral (templates that write [TOOL_CALLS]: Mistral 7B v0.3, Nemo, Small): [TOOL_CALLS] then a JSON array of
//     {"name": "f", "arguments": {...}}. [TOOL_CALLS] is a control token, which decodes to nothing.
//   DeepSeek (R1, its distills, V3): <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n```json\n
//     {...}\n```<｜tool▁call▁end｜>\n<｜tool▁call▁begin｜>...<｜tool▁calls▁end｜> (V3.1 writes
//     <｜tool▁call▁begin｜>f<｜tool▁sep｜>{...}<｜tool▁call▁end｜>, read too).
//   Qwen3-Coder XML: <tool_call>\n<function=f>\n<parameter=p>\nvalue\n</parameter>\n</function>\n</tool_call>, a
//     string parameter's value raw text (several lines allowed), any other value JSON.
#include <string_view>

namespace kairo::server {

enum class ToolCallFormat { None, Hermes, Llama3Json, Mistral, DeepSeek, Qwen3CoderXml };

// The format a chat template's tool calls take (None: no parser; calls stay in content).
ToolCallFormat detect_tool_call_format(std::string_view template_source);

namespace markers {
inline constexpr std::string_view kToolCallOpen = "<tool_call>";
inline constexpr std::string_view kToolCallClose = "</tool_call>";
inline constexpr std::string_view kMistralCalls = "[TOOL_CALLS]";
inline constexpr std::string_view kDeepSeekCallsBegin = "<｜tool▁calls▁begin｜>";
inline constexpr std::string_view kDeepSeekCallsEnd = "<｜tool▁calls▁end｜>";
inline constexpr std::string_view kDeepSeekCallBegin = "<｜tool▁call▁begin｜>";
inline constexpr std::string_view kDeepSeekCallEnd = "<｜tool▁call▁end｜>";
inline constexpr std::string_view kDeepSeekSep = "<｜tool▁sep｜>";
inline constexpr std::string_view kXmlFunctionOpen = "<function=";
inline constexpr std::string_view kXmlFunctionClose = "</function>";
inline constexpr std::string_view kXmlParameterOpen = "<parameter=";
inline constexpr std::string_view kXmlParameterClose = "</parameter>";
}  // namespace markers

}  // namespace kairo::server
