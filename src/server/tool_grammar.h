#pragma once
// The output grammar that enforces tool_choice "required" or a named function: the reply is one call (or, with
// parallel_tool_calls, one or more) in the model's tool-call format (tool_call_format.h), each naming one of the
// tools with arguments valid against that tool's parameters.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "server/api_error.h"
#include "server/openai/request_types.h"
#include "server/tool_call_format.h"

namespace kairo::server {

struct ToolGrammar {
  std::string gbnf;
  std::string root;  // the rule to start from
};

ApiResult<ToolGrammar> tool_choice_grammar(const ChatRequest& chat, ToolCallFormat format);

// tool_choice "auto" where calls open with a marker (Hermes, DeepSeek, Qwen3-Coder XML): free text until the marker,
// then calls held to the tools as forced ones are, and the reply ends with them. nullopt for the formats whose calls
// are the whole reply (Llama-3.x JSON, Mistral), and when a tool's parameters do not compile: such calls are
// parsed, not enforced, as before a grammar existed for them.
std::optional<ToolGrammar> tool_auto_grammar(const ChatRequest& chat, ToolCallFormat format);

// A tool the grammar may call: its name and its parameters' schema (an object schema).
struct CallableTool {
  std::string name;
  nlohmann::ordered_json parameters;
  std::string parameters_field;  // "tools[i].function.parameters", for errors
};

// Qwen3-Coder's XML calls (tool_grammar_xml.cpp): rules `tool_call` (one call of any tool), `tool_calls` (the
// reply) and the value rules they use.
ApiResult<std::string> xml_tool_call_rules(const std::vector<CallableTool>& tools, bool parallel);

// Rule names of the tool-call grammars use '_', which the JSON-schema compiler's generated names never contain, so
// a property called "tool-call" cannot collide with them.
inline constexpr const char* kToolCallsRule = "tool_calls";
inline constexpr const char* kToolAutoRule = "tool_auto";

}  // namespace kairo::server
