#pragma once
// GBNF for "any text in which none of these markers occurs": free text that runs until a marker (tool calls under
// tool_choice "auto" switch the grammar on at their opening marker), or a raw value cut at its closing tag
// (Qwen3-Coder's XML parameters). Every marker must start with the same character, which occurs nowhere else in
// any of them ('<' in the tool-call markers): each occurrence of it then starts a possible marker afresh, and no
// overlap needs tracking, so the rule stays small (one nested group per marker character).
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace kairo::grammar {

// The body of a rule (no name): text, possibly empty, that contains no marker; it may end in a marker's prefix.
Result<std::string> text_without_gbnf(const std::vector<std::string_view>& markers);

}  // namespace kairo::grammar
