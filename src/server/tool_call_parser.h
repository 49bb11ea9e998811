#pragma once
// Tool calls out of a chat reply, as it streams. The format is the model's, known from its chat template:
//   Hermes (Qwen2.5, Qwen3, Hermes 2/3 and most templates that mention <tool_call>):
//     text <tool_call>\n{"name": "f", "arguments": {...}}\n</tool_call> <tool_call>...</tool_call>
//   Llama-3.x JSON (Llama 3.1 / 3.2 templates: 'Respond in the format {"name": function name, "parameters": ...}'):
//     the whole reply is {"name": "f", "parameters": {...}}, or several such objects separated by ';'. A reply that
//     starts with '{' is held back until its object closes (it may be a call); any other reply is content.
//   Mistral (templates that write [TOOL_CALLS]: Mistral 7B v0.3, Nemo, Small): [TOOL_CALLS] then a JSON array of
//     {"name": "f", "arguments": {...}}. [TOOL_CALLS] is a control token, which decodes to nothing, so a reply that
//     starts with '[' is held back until its array closes; a "[TOOL_CALLS]" that does appear as text is dropped.
// A call is reported once it closes, whole: id, type, name and its arguments (a JSON text) in one piece, so
// streamed fragments concatenate exactly to the final arguments. Marker text never reaches content: a marker cut
// across deltas is held back until it is whole or cannot be one. Blank text between and after calls is dropped.
// A call that does not close before the reply ends (max_tokens), or whose body is not {"name", "arguments"} JSON,
// is returned as content, as the model wrote it.
#include <string>
#include <string_view>
#include <vector>

namespace kairo::server {

enum class ToolCallFormat { None, Hermes, Llama3Json, Mistral };

// The format a chat template's tool calls take (None: no parser; calls stay in content).
ToolCallFormat detect_tool_call_format(std::string_view template_source);

struct ParsedToolCall {
  std::string name;
  std::string arguments;  // JSON text, compact
};

class ToolCallParser {
 public:
  explicit ToolCallParser(ToolCallFormat format) : format_(format) {}

  struct Piece {
    std::string content;
    std::vector<ParsedToolCall> calls;  // calls that closed in this piece, in order
  };
  Piece push(std::string_view text);
  Piece flush();  // the reply ended

 private:
  void emit(std::string_view text, Piece& out);
  // Llama-3.x objects and Mistral arrays: calls as JSON values at the start of the reply.
  void emit_json(std::string_view text, Piece& out);
  // A closed call's body: a ParsedToolCall, or content when it is not a call.
  void close_call(Piece& out);

  ToolCallFormat format_;
  bool in_call_ = false;
  std::string held_;  // outside a call: a possible opening marker; inside: the call's body so far
  std::string rest_;  // text after a closing marker, still to read
  std::string pending_blank_;  // blank text after a call, dropped if another call or the end follows
  int n_calls_ = 0;
  // Llama-3.x and Mistral JSON: where the reply stands, and the JSON scan of the value being held.
  enum class JsonState { Start, Object, AfterCall, Text } json_state_ = JsonState::Start;
  int depth_ = 0;
  bool in_string_ = false, escaped_ = false;
};

}  // namespace kairo::server
