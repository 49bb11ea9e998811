#pragma once
// How many terminal columns text takes, so the line editor can put the cursor where the user sees it: wide East Asian
// characters and most emoji take two, combining marks none, everything else one. An approximation of wcwidth() that
// does not depend on the process's locale (kairo never calls setlocale).
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace kairo::tools::chat {

int codepoint_columns(uint32_t cp);
// Bytes that are not valid UTF-8 count one column each (the terminal shows a replacement character).
size_t text_columns(std::string_view text);

}  // namespace kairo::tools::chat
