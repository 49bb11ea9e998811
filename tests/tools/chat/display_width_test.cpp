// Columns on the terminal, for placing the line editor's cursor.
#include "chat/display_width.h"

#include <gtest/gtest.h>

namespace kairo::tools::chat {
namespace {

TEST(DisplayWidth, Columns) {
  EXPECT_EQ(text_columns("hello"), 5u);
  EXPECT_EQ(text_columns("caf\xC3\xA9"), 4u);             // é: one column
  EXPECT_EQ(text_columns("e\xCC\x81"), 1u);               // e + combining acute: one column
  EXPECT_EQ(text_columns("\xE6\x97\xA5\xE6\x9C\xAC"), 4u);  // 日本: two each
  EXPECT_EQ(text_columns("\xF0\x9F\x98\x80"), 2u);         // 😀
  EXPECT_EQ(text_columns("\xFF" "a"), 2u);                 // a stray byte shows as one replacement character
}

}  // namespace
}  // namespace kairo::tools::chat
