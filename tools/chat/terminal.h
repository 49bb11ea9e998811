#pragma once
// The terminal under `kairo chat`: the two modes the chat switches it between (what the terminal is: see
// terminal/terminal_info.h).
#include <termios.h>

#include "terminal/terminal_info.h"

namespace kairo::tools::chat {

using tools::can_edit_lines;
using tools::colour_wanted;
using tools::is_terminal;
using tools::terminal_columns;

// Switches a terminal between the chat's modes and gives it back as it was on destruction (or at SIGTERM / SIGHUP,
// which would otherwise leave the user's shell without echo).
class TerminalModes {
 public:
  explicit TerminalModes(int fd);
  ~TerminalModes();
  TerminalModes(const TerminalModes&) = delete;
  TerminalModes& operator=(const TerminalModes&) = delete;

  // Keys arrive one by one, unechoed, and Ctrl-C is a key like any other: the line editor's mode.
  void raw();
  // As raw, but Ctrl-C raises SIGINT (which stops a streaming reply). Keys typed meanwhile wait, unechoed, for the
  // next prompt instead of landing in the middle of the reply.
  void streaming();
  void restore();

 private:
  void apply(bool signals);

  int fd_;
  bool saved_ = false;
  termios original_{};
};

}  // namespace kairo::tools::chat
