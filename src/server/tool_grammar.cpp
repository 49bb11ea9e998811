#include "server/tool_grammar.h"

#include "core/format.h"
#include "grammar/gbnf_writer.h"
#include "grammar/json_schema.h"
#include "grammar/text_without.h"

namespace kairo::server {
namespace {

using json = nlohmann::ordered_json;
using grammar::GbnfWriter;
using grammar::JsonWhitespace;

// `rule` once, or (parallel) one or more times with `separator` (a GBNF literal) between.
std::string repeated(const std::string& rule, const std::string& separator, bool parallel) {
  return parallel ? rule + " (" + separator + " " + rule + ")*" : rule;
}

// The parameters of every tool as rules of one grammar. Each schema is compiled as a root of its own, so its
// "$ref": "#/$defs/..." still resolve (embedding it in a wrapper schema would point them at the wrapper).
ApiResult<grammar::SchemaRules> parameter_rules(const std::vector<CallableTool>& tools) {
  std::vector<json> schemas;
  for (const CallableTool& tool : tools) schemas.push_back(tool.parameters);
  // Compact: a call is read by a program, and spaces a small model might pile up would cost tokens, not meaning.
  auto compiled = grammar::json_schemas_to_gbnf(schemas, "arguments", JsonWhitespace::Compact);
  if (!compiled.ok()) return invalid_param("tools", "'tools': " + compiled.error().message);
  return std::move(*compiled);
}

// Formats whose call is a JSON object {"name": <the tool's>, "<args_key>": <its parameters>}: Hermes, Llama-3.x,
// Mistral.
ApiResult<std::string> json_object_call_rules(const std::vector<CallableTool>& tools, ToolCallFormat format,
                                              bool parallel) {
  auto compiled = parameter_rules(tools);
  if (!compiled.ok()) return compiled.error();
  const char* args_key = format == ToolCallFormat::Llama3Json ? "parameters" : "arguments";
  std::string rules = compiled->gbnf + "tool_ws ::= \" \"?\n";
  std::string any_call;
  for (size_t i = 0; i < tools.size(); ++i) {
    const auto token = [](const std::string& text) { return GbnfWriter::literal(text) + " tool_ws "; };
    const std::string rule = strprintf("tool_call_%zu", i);
    rules += rule + " ::= " + token("{") + token("\"name\"") + token(":") + token(json(tools[i].name).dump()) +
             token(",") + token(json(args_key).dump()) + token(":") + compiled->rule_names[i] + " tool_ws " +
             GbnfWriter::literal("}") + "\n";
    any_call += (i ? " | " : "") + rule;
  }
  rules += "tool_call_object ::= " + any_call + "\n";
  switch (format) {
    case ToolCallFormat::Mistral:
      // The array of calls; the [TOOL_CALLS] control token before it decodes to no text, so no grammar can ask
      // for it (the parser reads the array alone).
      rules += std::string(kToolCallsRule) + " ::= \"[\" " + repeated("tool_call_object", "\", \"", parallel) +
               " \"]\"\n";
      break;
    case ToolCallFormat::Hermes:
      rules += "tool_call ::= " + GbnfWriter::literal("<tool_call>\n") + " tool_call_object " +
               GbnfWriter::literal("\n</tool_call>") + "\n";
      rules += std::string(kToolCallsRule) + " ::= " + repeated("tool_call", "\"\\n\"", parallel) + "\n";
      break;
    default:  // Llama-3.x: the bare objects, separated by "; "
      rules += std::string(kToolCallsRule) + " ::= " + repeated("tool_call_object", "\"; \"", parallel) + "\n";
      break;
  }
  return rules;
}

// DeepSeek: the section markers around calls that each give the name as text and the arguments in a JSON fence.
ApiResult<std::string> deepseek_call_rules(const std::vector<CallableTool>& tools, bool parallel) {
  auto compiled = parameter_rules(tools);
  if (!compiled.ok()) return compiled.error();
  std::string rules = compiled->gbnf;
  std::string any_call;
  for (size_t i = 0; i < tools.size(); ++i) {
    const std::string opening = std::string(markers::kDeepSeekCallBegin) + "function" +
                                std::string(markers::kDeepSeekSep) + tools[i].name + "\n```json\n";
    const std::string closing = "\n```" + std::string(markers::kDeepSeekCallEnd);
    const std::string rule = strprintf("tool_call_%zu", i);
    rules += rule + " ::= " + GbnfWriter::literal(opening) + " " + compiled->rule_names[i] + " " +
             GbnfWriter::literal(closing) + "\n";
    any_call += (i ? " | " : "") + rule;
  }
  rules += "tool_call ::= " + any_call + "\n";
  rules += std::string(kToolCallsRule) + " ::= " + GbnfWriter::literal(markers::kDeepSeekCallsBegin) + " " +
           repeated("tool_call", "\"\\n\"", parallel) + " " + GbnfWriter::literal(markers::kDeepSeekCallsEnd) + "\n";
  return rules;
}

// The tools a call may name (one under a named tool_choice), each schema compiled alone first so that an error names
// the precise field.
ApiResult<std::vector<CallableTool>> callable_tools(const ChatRequest& chat) {
  std::vector<CallableTool> tools;
  for (size_t i = 0; i < chat.tools.size(); ++i) {
    const json& fn = chat.tools[i]["function"];
    const std::string name = fn["name"].get<std::string>();
    if (chat.tool_choice == "function" && name != chat.tool_choice_name) continue;
    CallableTool tool{name,
                      fn.contains("parameters") && !fn["parameters"].is_null() ? fn["parameters"]
                                                                              : json{{"type", "object"}},
                      strprintf("tools[%zu].function.parameters", i)};
    if (auto alone = grammar::json_schema_to_gbnf(tool.parameters); !alone.ok()) {
      return invalid_param(tool.parameters_field, "'" + tool.parameters_field + "': " + alone.error().message);
    }
    tools.push_back(std::move(tool));
  }
  return tools;
}

// The rules of the format, with kToolCallsRule: the reply's calls.
ApiResult<std::string> call_rules(const ChatRequest& chat, ToolCallFormat format) {
  auto tools = callable_tools(chat);
  if (!tools.ok()) return tools.error();
  switch (format) {
    case ToolCallFormat::DeepSeek: return deepseek_call_rules(*tools, chat.parallel_tool_calls);
    case ToolCallFormat::Qwen3CoderXml: return xml_tool_call_rules(*tools, chat.parallel_tool_calls);
    default: return json_object_call_rules(*tools, format, chat.parallel_tool_calls);
  }
}

}  // namespace

ApiResult<ToolGrammar> tool_choice_grammar(const ChatRequest& chat, ToolCallFormat format) {
  if (format == ToolCallFormat::None) {
    return invalid_param("tool_choice", "this model's chat template writes tool calls in no format kairo parses "
                                        "(it knows Hermes/Qwen <tool_call>, Llama-3.x JSON, Mistral "
                                        "[TOOL_CALLS], DeepSeek and Qwen3-Coder XML); use tool_choice "
                                        "\"auto\" or \"none\", or serve with a --chat-template-file that writes "
                                        "one of them");
  }
  auto rules = call_rules(chat, format);
  if (!rules.ok()) return rules.error();
  return ToolGrammar{std::move(*rules), kToolCallsRule};
}

std::optional<ToolGrammar> tool_auto_grammar(const ChatRequest& chat, ToolCallFormat format) {
  std::string_view marker;
  if (format == ToolCallFormat::Hermes || format == ToolCallFormat::Qwen3CoderXml) marker = markers::kToolCallOpen;
  if (format == ToolCallFormat::DeepSeek) marker = markers::kDeepSeekCallsBegin;
  if (marker.empty()) return std::nullopt;
  auto rules = call_rules(chat, format);
  auto free_text = grammar::text_without_gbnf({marker});
  if (!rules.ok() || !free_text.ok()) return std::nullopt;
  return ToolGrammar{*rules + "tool_free_text ::= " + *free_text + "\n" + kToolAutoRule +
                         " ::= tool_free_text " + kToolCallsRule + "?\n",
                     kToolAutoRule};
}

}  // namespace kairo::server
