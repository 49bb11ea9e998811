#pragma once
// Model output made safe to print on a terminal: a reply is untrusted text, and an escape sequence in it could move
// the cursor, retitle the window or worse. Control characters other than newline and tab are dropped: C0 (ESC and
// CR among them), DEL, and C1 (U+0080..U+009F, which some terminals also obey). Input must be valid UTF-8, as the
// engine's text deltas are.
#include <string>
#include <string_view>

namespace kairo::tools::chat {

std::string terminal_safe(std::string_view text);

}  // namespace kairo::tools::chat
