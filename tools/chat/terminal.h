#pragma once
// The terminal under `kairo chat`: whether a stream is one, whether it wants colours, how wide it is, and the two
// modes the chat switches it between.
#include <termios.h>

namespace kairo::tools::chat {

bool is_terminal(int fd);
// Colours only on a terminal that can show them, and never when NO_COLOR is set to anything (no-color.org).
bool colour_wanted(int fd);
// Both ends are a terminal that understands cursor movement (TERM is not "dumb"): what the line editor needs.
bool can_edit_lines(int in_fd, int out_fd);
int terminal_columns(int fd);  // 80 when the terminal does not say

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
