#include "chat/plain_line_reader.h"

#include <poll.h>
#include <unistd.h>

#include <cerrno>

#include "chat/interrupt.h"

namespace kairo::tools::chat {

PlainLineReader::PlainLineReader(int in_fd, int out_fd, bool show_prompt)
    : in_fd_(in_fd), out_fd_(out_fd), show_prompt_(show_prompt) {}

InputLine PlainLineReader::read(std::string_view prompt) {
  // A Ctrl-C from before this prompt (the reply already stopped) is not meant for it. Taken before the prompt is
  // shown: one typed as soon as the prompt appears is meant for it.
  take_interrupt();
  if (show_prompt_ && !prompt.empty()) {
    [[maybe_unused]] const ssize_t n = ::write(out_fd_, prompt.data(), prompt.size());
  }
  for (;;) {
    const size_t newline = buffered_.find('\n');
    if (newline != std::string::npos || (at_end_ && !buffered_.empty())) {
      const size_t end = newline == std::string::npos ? buffered_.size() : newline;
      InputLine line;
      line.text = buffered_.substr(0, end);
      if (!line.text.empty() && line.text.back() == '\r') line.text.pop_back();
      buffered_.erase(0, newline == std::string::npos ? end : end + 1);
      return line;
    }
    if (at_end_) return InputLine{InputLine::Status::EndOfInput, {}, false};
    if (take_interrupt()) {
      buffered_.clear();  // the terminal dropped the half-typed line too
      return InputLine{InputLine::Status::Interrupted, {}, false};
    }
    // A SIGINT that lands between the check above and poll() does not wake poll(): the timeout bounds how late the
    // flag is seen (a CI run under load lost such a Ctrl-C with an unbounded wait).
    pollfd pfd{in_fd_, POLLIN, 0};
    const int ready = ::poll(&pfd, 1, 100);
    if (ready < 0 && errno != EINTR) return InputLine{InputLine::Status::EndOfInput, {}, false};
    if (ready <= 0) continue;
    char chunk[4096];
    const ssize_t n = ::read(in_fd_, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      at_end_ = true;
      continue;
    }
    buffered_.append(chunk, static_cast<size_t>(n));
  }
}

}  // namespace kairo::tools::chat
