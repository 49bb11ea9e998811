#pragma once
// The output grammar that enforces tool_choice "required" or a named function: the reply is one call (or, with
// parallel_tool_calls, one or more) in the model's tool-call format, each {"name": <a tool>, "arguments": <valid
// against that tool's parameters>}.
#include <string>

#include "server/api_error.h"
#include "server/openai/request_types.h"
#include "server/tool_call_parser.h"

namespace kairo::server {

struct ToolGrammar {
  std::string gbnf;
  std::string root;  // the rule to start from
};

ApiResult<ToolGrammar> tool_choice_grammar(const ChatRequest& chat, ToolCallFormat format);

}  // namespace kairo::server
