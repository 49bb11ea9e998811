#pragma once
// Where the chat's input lines come from: the line editor on a terminal, or plain lines from a pipe, a file or a
// terminal that cannot edit (TERM=dumb).
#include <string>
#include <string_view>

namespace kairo::tools::chat {

struct InputLine {
  enum class Status { Line, EndOfInput, Interrupted };
  Status status = Status::Line;
  std::string text;        // without its line ending; Interrupted: what had been typed (now dropped)
  bool continues = false;  // the line break came inside a paste: more of the same message follows
};

class LineSource {
 public:
  virtual ~LineSource() = default;
  virtual InputLine read(std::string_view prompt) = 0;
  virtual void remember(const std::string& /*line*/) {}  // for the history of an editor that keeps one
};

}  // namespace kairo::tools::chat
