#include "chat/line_editor.h"

#include <poll.h>
#include <unistd.h>

#include <cerrno>

#include "chat/display_width.h"
#include "chat/key_decoder.h"
#include "chat/terminal.h"

namespace kairo::tools::chat {
namespace {

// How long the rest of an escape sequence may take after its ESC before the bytes are taken for what they are (a
// lone Escape key). Terminals send a sequence in one write, so this only matters for a bare Escape.
constexpr int kEscapeTimeoutMs = 50;

constexpr std::string_view kBracketedPasteOn = "\x1b[?2004h";
constexpr std::string_view kBracketedPasteOff = "\x1b[?2004l";

// The bytes of `text` from `begin` that fit in `columns`.
size_t fit_columns(std::string_view text, size_t begin, size_t columns) {
  size_t end = begin, used = 0;
  while (end < text.size()) {
    size_t next = end + 1;
    while (next < text.size() && (static_cast<unsigned char>(text[next]) & 0xC0) == 0x80) ++next;
    const size_t w = text_columns(text.substr(end, next - end));
    if (used + w > columns) break;
    used += w;
    end = next;
  }
  return end;
}

}  // namespace

LineEditor::LineEditor(int in_fd, int out_fd, TerminalModes& modes) : in_fd_(in_fd), out_fd_(out_fd), modes_(modes) {}

void LineEditor::write_out(std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(out_fd_, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    bytes.remove_prefix(static_cast<size_t>(n));
  }
}

LineEditor::ReadMore LineEditor::read_more(int timeout_ms) {
  for (;;) {
    pollfd pfd{in_fd_, POLLIN, 0};
    const int ready = ::poll(&pfd, 1, timeout_ms);
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) return ReadMore::Timeout;
    char chunk[4096];
    const ssize_t n = ready < 0 ? -1 : ::read(in_fd_, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return ReadMore::Closed;
    pending_.append(chunk, static_cast<size_t>(n));
    return ReadMore::Got;
  }
}

void LineEditor::refresh(std::string_view prompt) {
  const size_t width = static_cast<size_t>(terminal_columns(out_fd_));
  const size_t prompt_columns = text_columns(prompt);
  // One column stays free so the cursor after the last character never wraps the terminal's line.
  const size_t room = width > prompt_columns + 1 ? width - prompt_columns - 1 : 1;
  const std::string& text = line_.text();
  // Scroll so that the cursor is visible: as much of the text before it as fits, counted back from it.
  size_t begin = line_.cursor(), before_cursor = 0;
  while (begin > 0) {
    size_t previous = begin - 1;
    while (previous > 0 && (static_cast<unsigned char>(text[previous]) & 0xC0) == 0x80) --previous;
    const size_t w = text_columns(std::string_view(text).substr(previous, begin - previous));
    if (before_cursor + w > room) break;
    before_cursor += w;
    begin = previous;
  }
  const size_t end = fit_columns(text, begin, room);
  std::string out = "\r";
  out += prompt;
  out.append(text, begin, end - begin);
  out += "\x1b[0K\r";
  const size_t cursor_column = prompt_columns + before_cursor;
  if (cursor_column > 0) out += "\x1b[" + std::to_string(cursor_column) + "C";
  write_out(out);
}

void LineEditor::browse_history(int step) {
  if (history_.empty()) return;
  if (history_pos_ == history_.size()) typed_ = line_.text();
  const long pos = static_cast<long>(history_pos_) + step;
  if (pos < 0 || pos > static_cast<long>(history_.size())) return;
  history_pos_ = static_cast<size_t>(pos);
  line_.replace(history_pos_ == history_.size() ? typed_ : history_[history_pos_]);
}

void LineEditor::remember(const std::string& line) {
  if (line.empty() || (!history_.empty() && history_.back() == line)) return;
  history_.push_back(line);
}

InputLine LineEditor::read(std::string_view prompt) {
  modes_.raw();
  line_.clear();
  history_pos_ = history_.size();
  write_out(kBracketedPasteOn);
  refresh(prompt);
  InputLine result;
  for (bool done = false; !done;) {
    if (pending_.empty() || decode_key(pending_).n_bytes == 0) {
      const bool mid_key = !pending_.empty();
      const ReadMore got = read_more(mid_key ? kEscapeTimeoutMs : -1);
      if (got == ReadMore::Closed) {
        result.status = InputLine::Status::EndOfInput;
        break;
      }
      if (got == ReadMore::Timeout) pending_.clear();  // a bare Escape, or a sequence cut short: nothing to do
      continue;
    }
    const DecodedKey decoded = decode_key(pending_);
    const char first_byte = pending_[0];
    pending_.erase(0, decoded.n_bytes);
    const Key& key = decoded.key;
    if (skip_paste_newline_) {
      skip_paste_newline_ = false;
      if (first_byte == '\n' && in_paste_) continue;
    }
    switch (key.kind) {
      case KeyKind::Text: line_.insert(key.text); break;
      case KeyKind::Tab: line_.insert("    "); break;  // a tab's width depends on its column; spaces' do not
      case KeyKind::Enter:
        result.text = line_.text();
        result.continues = in_paste_;
        skip_paste_newline_ = in_paste_ && first_byte == '\r';
        done = true;
        break;
      case KeyKind::Backspace: line_.backspace(); break;
      case KeyKind::Delete: line_.delete_forward(); break;
      case KeyKind::Left: line_.move_left(); break;
      case KeyKind::Right: line_.move_right(); break;
      case KeyKind::WordLeft: line_.move_word_left(); break;
      case KeyKind::WordRight: line_.move_word_right(); break;
      case KeyKind::Home: line_.move_home(); break;
      case KeyKind::End: line_.move_end(); break;
      case KeyKind::Up: browse_history(-1); break;
      case KeyKind::Down: browse_history(+1); break;
      case KeyKind::KillToEnd: line_.kill_to_end(); break;
      case KeyKind::KillToStart: line_.kill_to_start(); break;
      case KeyKind::DeleteWordBefore: line_.delete_word_before(); break;
      case KeyKind::ClearScreen: write_out("\x1b[H\x1b[2J"); break;
      case KeyKind::Interrupt:
        result.status = InputLine::Status::Interrupted;
        result.text = line_.text();
        in_paste_ = false;
        done = true;
        break;
      case KeyKind::EndOfInput:
        if (line_.empty()) {
          result.status = InputLine::Status::EndOfInput;
          done = true;
        } else {
          line_.delete_forward();
        }
        break;
      case KeyKind::PasteStart: in_paste_ = true; break;
      case KeyKind::PasteEnd: in_paste_ = false; break;
      case KeyKind::Ignored: break;
    }
    // A paste arrives as many keys at once: drawing the line once they are all in keeps a long paste fast.
    if (!done && (pending_.empty() || decode_key(pending_).n_bytes == 0)) refresh(prompt);
  }
  // The line as typed stays on the screen, the cursor after it; "^C" shows why an interrupted one went nowhere.
  line_.move_end();
  refresh(prompt);
  write_out(kBracketedPasteOff);
  write_out(result.status == InputLine::Status::Interrupted ? "^C\n" : "\n");
  return result;
}

}  // namespace kairo::tools::chat
