#pragma once
// A small line editor for the chat prompt, on a terminal in raw mode (TerminalModes::raw): cursor keys, Home/End,
// the readline control keys (Ctrl-A/E/B/F/K/U/W/L, Alt-b/f), a history on Up/Down, and bracketed paste, so pasting
// several lines makes one message instead of sending each line. The line scrolls sideways when it is wider than the
// terminal (as linenoise's single-line mode does), so the editor never has to track wrapped rows.
//   Enter returns the line; Ctrl-C returns Interrupted (the line is dropped); Ctrl-D returns EndOfInput on an empty
//   line and deletes the character under the cursor otherwise.
#include <string>
#include <vector>

#include "chat/line_buffer.h"
#include "chat/line_source.h"

namespace kairo::tools::chat {

class TerminalModes;

class LineEditor final : public LineSource {
 public:
  LineEditor(int in_fd, int out_fd, TerminalModes& modes);
  InputLine read(std::string_view prompt) override;
  void remember(const std::string& line) override;

 private:
  enum class ReadMore { Got, Timeout, Closed };
  ReadMore read_more(int timeout_ms);  // appends what the terminal has sent to pending_
  void refresh(std::string_view prompt);
  void write_out(std::string_view bytes);
  void browse_history(int step);

  int in_fd_;
  int out_fd_;
  TerminalModes& modes_;
  LineBuffer line_;
  std::string pending_;  // bytes read that do not make a whole key yet
  bool in_paste_ = false;
  bool skip_paste_newline_ = false;  // a pasted "\r\n" is one line break
  std::vector<std::string> history_;
  size_t history_pos_ = 0;  // history_.size(): the line being typed, not a recalled one
  std::string typed_;       // the line being typed, kept while the history is browsed
};

}  // namespace kairo::tools::chat
