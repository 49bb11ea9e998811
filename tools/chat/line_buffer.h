#pragma once
// The text of the line being edited and the cursor in it, with the edits the line editor's keys make. No terminal
// here: every edit is a plain string operation, tested as such. The cursor moves by code point and never stops inside
// a UTF-8 sequence; a word is a run of characters other than spaces.
#include <cstddef>
#include <string>
#include <string_view>

namespace kairo::tools::chat {

class LineBuffer {
 public:
  const std::string& text() const { return text_; }
  size_t cursor() const { return cursor_; }  // a byte offset into text()
  bool empty() const { return text_.empty(); }

  void insert(std::string_view bytes);
  void backspace();         // the character before the cursor
  void delete_forward();    // the character under the cursor
  void delete_word_before();
  void kill_to_end();
  void kill_to_start();
  void move_left();
  void move_right();
  void move_word_left();
  void move_word_right();
  void move_home() { cursor_ = 0; }
  void move_end() { cursor_ = text_.size(); }
  void replace(std::string text);  // e.g. a line from the history; the cursor goes to its end
  void clear() { replace({}); }

 private:
  size_t previous_boundary(size_t pos) const;
  size_t next_boundary(size_t pos) const;

  std::string text_;
  size_t cursor_ = 0;
};

}  // namespace kairo::tools::chat
