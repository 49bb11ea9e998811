#include "server/tool_grammar.h"

#include "core/format.h"
#include "grammar/json_schema.h"

namespace kairo::server {

using json = nlohmann::ordered_json;

ApiResult<ToolGrammar> tool_choice_grammar(const ChatRequest& chat, ToolCallFormat format) {
  if (format == ToolCallFormat::None) {
    return invalid_param("tool_choice", "this model's chat template writes tool calls in no format kairo parses "
                                        "(it knows Hermes/Qwen <tool_call>, Llama-3.x JSON and Mistral "
                                        "[TOOL_CALLS]); use tool_choice "
                                        "\"auto\" or \"none\"");
  }
  // Hermes: {"name", "arguments"} inside <tool_call> markers; Llama-3.x: a bare {"name", "parameters"}.
  const char* args_key = format == ToolCallFormat::Llama3Json ? "parameters" : "arguments";
  json any_of = json::array();
  for (size_t i = 0; i < chat.tools.size(); ++i) {
    const json& fn = chat.tools[i]["function"];
    const std::string name = fn["name"].get<std::string>();
    if (chat.tool_choice == "function" && name != chat.tool_choice_name) continue;
    const json params = fn.contains("parameters") && !fn["parameters"].is_null() ? fn["parameters"]
                                                                                  : json{{"type", "object"}};
    const std::string param = strprintf("tools[%zu].function.parameters", i);
    if (auto alone = grammar::json_schema_to_gbnf(params); !alone.ok()) {  // the precise field in the error
      return invalid_param(param, "'" + param + "': " + alone.error().message);
    }
    any_of.push_back(json{{"type", "object"},
                          {"properties", {{"name", {{"const", name}}}, {args_key, params}}},
                          {"required", {"name", args_key}},
                          {"additionalProperties", false}});
  }
  const json schema = any_of.size() == 1 ? any_of[0] : json{{"anyOf", any_of}};
  // Compact: a call is read by a program, and spaces a small model might pile up would cost tokens, not meaning.
  auto gbnf = grammar::json_schema_to_gbnf(schema, grammar::JsonWhitespace::Compact);
  if (!gbnf.ok()) return invalid_param("tools", "'tools': " + gbnf.error().message);
  ToolGrammar g;
  g.root = "tool-calls";
  if (format == ToolCallFormat::Mistral) {
    // The array of calls; the [TOOL_CALLS] control token before it decodes to no text, so no grammar can ask for
    // it (the parser reads the array alone).
    g.gbnf = *gbnf + "\n" + (chat.parallel_tool_calls ? "tool-calls ::= \"[\" root (\", \" root)* \"]\"\n"
                                                      : "tool-calls ::= \"[\" root \"]\"\n");
    return g;
  }
  const std::string call = format == ToolCallFormat::Hermes ? "tool-call ::= \"<tool_call>\\n\" root \"\\n</tool_call>\"\n"
                                                            : "tool-call ::= root\n";
  const std::string separator = format == ToolCallFormat::Hermes ? "\"\\n\"" : "\"; \"";
  g.gbnf = *gbnf + "\n" + call +
           (chat.parallel_tool_calls ? "tool-calls ::= tool-call (" + separator + " tool-call)*\n"
                                     : "tool-calls ::= tool-call\n");
  return g;
}

}  // namespace kairo::server
