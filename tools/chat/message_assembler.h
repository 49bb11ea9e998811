#pragma once
// Builds one chat message from input lines. Two ways to write several lines:
//   - a line ending in a backslash continues on the next one (the backslash is dropped);
//   - `"""` at the start of a line opens a block that `"""` at the end of a line closes, as in `ollama run`. Text on
//     the opening and closing lines belongs to the message; `"""one line"""` is a block too.
// A block is always sent as text, even when it starts with '/': that is how to send a message that looks like a
// command. Lines of a paste (InputLine::continues) join as if each ended in a backslash.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kairo::tools::chat {

struct Message {
  std::string text;
  bool literal = false;  // from a """ block: never a command
};

class MessageAssembler {
 public:
  // Adds a line; returns the message once it is complete.
  std::optional<Message> add(std::string_view line, bool continues = false);
  bool in_progress() const { return !lines_.empty() || in_block_; }  // the next line continues a message
  void reset();

 private:
  Message finish();

  std::vector<std::string> lines_;
  bool in_block_ = false;
};

}  // namespace kairo::tools::chat
