#include "terminal/terminal_info.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace kairo::tools {

bool is_terminal(int fd) { return ::isatty(fd) == 1; }

bool colour_wanted(int fd) {
  const char* no_color = std::getenv("NO_COLOR");
  if (no_color && *no_color) return false;
  const char* term = std::getenv("TERM");
  if (term && std::strcmp(term, "dumb") == 0) return false;
  return is_terminal(fd);
}

bool can_edit_lines(int in_fd, int out_fd) {
  const char* term = std::getenv("TERM");
  if (term && (std::strcmp(term, "dumb") == 0 || std::strcmp(term, "emacs") == 0)) return false;
  return is_terminal(in_fd) && is_terminal(out_fd);
}

int terminal_columns(int fd) {
  winsize ws{};
  if (::ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
  return 80;
}

}  // namespace kairo::tools
