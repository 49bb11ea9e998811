// Model output printed on a terminal cannot drive it.
#include "chat/terminal_text.h"

#include <gtest/gtest.h>

namespace kairo::tools::chat {
namespace {

TEST(TerminalText, DropsControlCharactersButNotLineBreaksOrTabs) {
  EXPECT_EQ(terminal_safe("a\x1b]0;pwned\x07" "b"), "a]0;pwnedb");
  EXPECT_EQ(terminal_safe("x\x1b[2Jy"), "x[2Jy");
  EXPECT_EQ(terminal_safe("one\r\ntwo\tthree\x7f"), "one\ntwo\tthree");
  EXPECT_EQ(terminal_safe("c1:\xC2\x9B" "31m"), "c1:31m");  // U+009B is a CSI to some terminals
  EXPECT_EQ(terminal_safe("caf\xC3\xA9 \xC2\xA0ok"), "caf\xC3\xA9 \xC2\xA0ok");  // é and a no-break space stay
}

}  // namespace
}  // namespace kairo::tools::chat
