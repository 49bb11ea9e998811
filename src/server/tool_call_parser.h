#pragma once
// Tool calls out of a chat reply, as it streams, in the model's format (tool_call_format.h, known from its chat
// template). Two kinds of format:
//   marked (Hermes, DeepSeek, Qwen3-Coder XML): calls between an opening and a closing marker, text around them;
//   JSON at the start (Llama-3.x objects, Mistral arrays): a reply that starts with '{' (Llama) or '[' (Mistral,
//     whose [TOOL_CALLS] control token decodes to nothing) is held back until the value closes, since it may be a
//     call; any other reply is content. A "[TOOL_CALLS]" that does appear as text is dropped.
// A call is reported once it closes, whole: id, type, name and its arguments (a JSON text) in one piece, so
// streamed fragments concatenate exactly to the final arguments. Marker text never reaches content: a marker cut
// across deltas is held back until it is whole or cannot be one. Blank text between and after calls is dropped.
// A call that does not close before the reply ends (max_tokens), or whose body is not a call, is returned as
// content, as the model wrote it; except DeepSeek's section of calls, whose closing marker the R1 template itself
// leaves out after a single call: complete calls in it count.
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "server/tool_call_bodies.h"
#include "server/tool_call_format.h"

namespace kairo::server {

class ToolCallParser {
 public:
  // `tools`: the request's (Qwen3-Coder XML reads parameter types from them); may be null.
  explicit ToolCallParser(ToolCallFormat format, std::shared_ptr<const nlohmann::ordered_json> tools = nullptr);

  struct Piece {
    std::string content;
    std::vector<ParsedToolCall> calls;  // calls that closed in this piece, in order
  };
  Piece push(std::string_view text);
  Piece flush();  // the reply ended

 private:
  // Marked formats.
  void emit(std::string_view text, Piece& out);
  // A closed body: its calls, or content when it is not a call.
  void close_call(Piece& out);
  std::optional<std::vector<ParsedToolCall>> parse_body(std::string_view body) const;
  // Llama-3.x objects and Mistral arrays: calls as JSON values at the start of the reply.
  void emit_json(std::string_view text, Piece& out);

  ToolCallFormat format_;
  std::shared_ptr<const nlohmann::ordered_json> tools_;
  std::string_view open_, close_;  // a marked format's markers
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
