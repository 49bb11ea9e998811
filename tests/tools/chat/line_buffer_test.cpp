// The line editor's edits as plain string operations.
#include "chat/line_buffer.h"

#include <gtest/gtest.h>

namespace kairo::tools::chat {
namespace {

TEST(LineBuffer, InsertsAtTheCursor) {
  LineBuffer b;
  b.insert("helo");
  b.move_left();
  b.insert("l");
  EXPECT_EQ(b.text(), "hello");
  EXPECT_EQ(b.cursor(), 4u);
}

TEST(LineBuffer, MovesAndDeletesWholeCodePoints) {
  LineBuffer b;
  b.insert("a\xC3\xA9\xF0\x9F\x98\x80");  // a é 😀
  b.move_left();
  EXPECT_EQ(b.cursor(), 3u);  // before the 4-byte emoji, not inside it
  b.move_left();
  EXPECT_EQ(b.cursor(), 1u);
  b.delete_forward();
  EXPECT_EQ(b.text(), "a\xF0\x9F\x98\x80");
  b.move_end();
  b.backspace();
  EXPECT_EQ(b.text(), "a");
  b.backspace();
  b.backspace();  // at the start: nothing left to delete
  EXPECT_EQ(b.text(), "");
  EXPECT_EQ(b.cursor(), 0u);
}

TEST(LineBuffer, WordMotionsSkipSpacesThenAWord) {
  LineBuffer b;
  b.insert("tell me  a story");
  b.move_word_left();
  EXPECT_EQ(b.cursor(), 11u);  // before "story"
  b.move_word_left();
  b.move_word_left();
  EXPECT_EQ(b.cursor(), 5u);  // before "me"
  b.move_word_right();
  EXPECT_EQ(b.cursor(), 7u);  // after "me"
  b.move_end();
  b.delete_word_before();
  EXPECT_EQ(b.text(), "tell me  a ");
}

TEST(LineBuffer, KillsToEitherEnd) {
  LineBuffer b;
  b.insert("hello world");
  for (int i = 0; i < 5; ++i) b.move_left();
  b.kill_to_end();
  EXPECT_EQ(b.text(), "hello ");
  b.move_left();
  b.kill_to_start();
  EXPECT_EQ(b.text(), " ");
  EXPECT_EQ(b.cursor(), 0u);
}

TEST(LineBuffer, ReplacePutsTheCursorAtTheEnd) {
  LineBuffer b;
  b.insert("draft");
  b.move_home();
  b.replace("from history");
  EXPECT_EQ(b.cursor(), b.text().size());
}

}  // namespace
}  // namespace kairo::tools::chat
