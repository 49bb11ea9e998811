#pragma once
// Lines as they come, without editing: from a pipe or file (`kairo chat < questions.txt`), or from a terminal that
// cannot edit, which then edits lines itself (canonical mode). A line may end in "\n" or "\r\n"; the last one needs
// no line ending.
#include <string>

#include "chat/line_source.h"

namespace kairo::tools::chat {

class PlainLineReader final : public LineSource {
 public:
  // show_prompt: write the prompt to out_fd before each line (a person is typing).
  PlainLineReader(int in_fd, int out_fd, bool show_prompt);
  // Interrupted when Ctrl-C (take_interrupt) arrives while waiting: poll() wakes on SIGINT.
  InputLine read(std::string_view prompt) override;

 private:
  int in_fd_;
  int out_fd_;
  bool show_prompt_;
  bool at_end_ = false;
  std::string buffered_;  // read but not yet returned
};

}  // namespace kairo::tools::chat
