#include "server/tool_call_format.h"

namespace kairo::server {

ToolCallFormat detect_tool_call_format(std::string_view source) {
  using namespace markers;
  const auto has = [&](std::string_view s) { return source.find(s) != std::string_view::npos; };
  // Qwen3-Coder's template also writes <tool_call>: its XML body tells it apart from Hermes.
  if (has(kToolCallOpen) && has(kXmlFunctionOpen) && has(kXmlParameterOpen)) return ToolCallFormat::Qwen3CoderXml;
  if (has(kToolCallOpen)) return ToolCallFormat::Hermes;
  if (has(kDeepSeekCallsBegin)) return ToolCallFormat::DeepSeek;
  if (has(kMistralCalls)) return ToolCallFormat::Mistral;
  if (has(R"({"name": function name, "parameters": dictionary)")) return ToolCallFormat::Llama3Json;
  return ToolCallFormat::None;
}

}  // namespace kairo::server
