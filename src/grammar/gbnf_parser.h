#pragma once
// GBNF (llama.cpp's grammar syntax) -> GrammarAst. Accepted syntax, as in llama.cpp's grammars/README.md:
//   name ::= alternatives        rules; a rule ends at a newline outside parentheses ('::=' and '|' may end a line)
//   "text"  [a-z0-9_] [^"\\]  .  terminals: literals, character classes (negated with ^), any code point
//   ( ... )  a | b  x* x+ x?  x{m}  x{m,}  x{m,n}
//   escapes \n \r \t \\ \" \[ \] \- \xHH \uHHHH \UHHHHHHHH; '#' starts a comment
// Errors name the line and column and what was expected there.
#include <string_view>

#include "core/result.h"
#include "grammar/grammar_ast.h"

namespace kairo::grammar {

// Repetition bounds above this are refused: {m,n} expands to n copies of the item.
inline constexpr uint32_t kMaxRepeatBound = 1000;

Result<GrammarAst> parse_gbnf(std::string_view text);

}  // namespace kairo::grammar
