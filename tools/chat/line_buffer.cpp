#include "chat/line_buffer.h"

namespace kairo::tools::chat {
namespace {

bool is_continuation(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

}  // namespace

size_t LineBuffer::previous_boundary(size_t pos) const {
  if (pos == 0) return 0;
  --pos;
  while (pos > 0 && is_continuation(text_[pos])) --pos;
  return pos;
}

size_t LineBuffer::next_boundary(size_t pos) const {
  if (pos >= text_.size()) return text_.size();
  ++pos;
  while (pos < text_.size() && is_continuation(text_[pos])) ++pos;
  return pos;
}

void LineBuffer::insert(std::string_view bytes) {
  text_.insert(cursor_, bytes);
  cursor_ += bytes.size();
}

void LineBuffer::backspace() {
  const size_t from = previous_boundary(cursor_);
  text_.erase(from, cursor_ - from);
  cursor_ = from;
}

void LineBuffer::delete_forward() { text_.erase(cursor_, next_boundary(cursor_) - cursor_); }

void LineBuffer::delete_word_before() {
  const size_t end = cursor_;
  move_word_left();
  text_.erase(cursor_, end - cursor_);
}

void LineBuffer::kill_to_end() { text_.erase(cursor_); }

void LineBuffer::kill_to_start() {
  text_.erase(0, cursor_);
  cursor_ = 0;
}

void LineBuffer::move_left() { cursor_ = previous_boundary(cursor_); }
void LineBuffer::move_right() { cursor_ = next_boundary(cursor_); }

void LineBuffer::move_word_left() {
  while (cursor_ > 0 && text_[cursor_ - 1] == ' ') --cursor_;
  while (cursor_ > 0 && text_[cursor_ - 1] != ' ') cursor_ = previous_boundary(cursor_);
}

void LineBuffer::move_word_right() {
  while (cursor_ < text_.size() && text_[cursor_] == ' ') ++cursor_;
  while (cursor_ < text_.size() && text_[cursor_] != ' ') cursor_ = next_boundary(cursor_);
}

void LineBuffer::replace(std::string text) {
  text_ = std::move(text);
  cursor_ = text_.size();
}

}  // namespace kairo::tools::chat
