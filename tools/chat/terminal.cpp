#include "chat/terminal.h"

#include <unistd.h>

#include <csignal>

namespace kairo::tools::chat {
namespace {

// What the fatal-signal handler restores: copies, because a handler may only touch plain data.
int g_restore_fd = -1;
termios g_restore_mode{};

void restore_and_reraise(int sig) {
  if (g_restore_fd >= 0) ::tcsetattr(g_restore_fd, TCSANOW, &g_restore_mode);
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

}  // namespace

TerminalModes::TerminalModes(int fd) : fd_(fd) {
  if (::tcgetattr(fd_, &original_) != 0) return;
  saved_ = true;
  g_restore_fd = fd_;
  g_restore_mode = original_;
  std::signal(SIGTERM, restore_and_reraise);
  std::signal(SIGHUP, restore_and_reraise);
}

TerminalModes::~TerminalModes() {
  restore();
  if (saved_) {
    std::signal(SIGTERM, SIG_DFL);
    std::signal(SIGHUP, SIG_DFL);
    g_restore_fd = -1;
  }
}

void TerminalModes::raw() { apply(/*signals=*/false); }
void TerminalModes::streaming() { apply(/*signals=*/true); }

void TerminalModes::restore() {
  if (saved_) ::tcsetattr(fd_, TCSANOW, &original_);
}

void TerminalModes::apply(bool signals) {
  if (!saved_) return;
  termios mode = original_;
  // Output processing stays on ('\n' still moves to the start of the next line). TCSANOW, not TCSAFLUSH: keys typed
  // ahead must survive the switch.
  mode.c_iflag &= ~static_cast<tcflag_t>(BRKINT | ICRNL | INPCK | ISTRIP | IXON);
  mode.c_cflag |= CS8;
  mode.c_lflag &= ~static_cast<tcflag_t>(ECHO | ICANON | IEXTEN);
  if (signals) {
    mode.c_lflag |= ISIG;
  } else {
    mode.c_lflag &= ~static_cast<tcflag_t>(ISIG);
  }
  mode.c_cc[VMIN] = 1;
  mode.c_cc[VTIME] = 0;
  ::tcsetattr(fd_, TCSANOW, &mode);
}

}  // namespace kairo::tools::chat
