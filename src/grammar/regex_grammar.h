#pragma once
// A regular expression (the subset JSON Schema `pattern` and vLLM's `structured_outputs.regex` use in practice) as
// a GBNF expression, so it can be matched by the grammar engine like any other rule.
//
// Supported: literals, `.`, classes `[a-z_]` `[^"]` with escapes, \d \w \s \D \W \S, \n \t \r \f \v \0 \xHH
// \uHHHH, groups `( )` and `(?: )`, `|`, quantifiers * + ? {m} {m,} {m,n} (a lazy `?` suffix is accepted: it
// changes which match a search finds, not the language), `^` at the start and `$` at the end.
// Refused with the construct named: backreferences, lookaround, word boundaries, named groups, possessive
// quantifiers, anchors in the middle, flags.
#include <string>
#include <string_view>

#include "core/result.h"
#include "grammar/gbnf_writer.h"

namespace kairo::grammar {

enum class RegexTarget {
  kRaw,         // the matched text is the output itself
  kJsonString,  // the matched text is the content of a JSON string: `"` `\` and control characters are escaped
};

enum class RegexAnchoring {
  kFullMatch,  // the whole text matches (vLLM, outlines)
  kSearch,     // JSON Schema: the pattern may match anywhere unless it starts with ^ / ends with $
};

// A GBNF expression (helper rules go into `writer`) for the texts the pattern accepts.
Result<std::string> regex_to_gbnf(std::string_view pattern, GbnfWriter& writer, RegexTarget target,
                                  RegexAnchoring anchoring);

// The expression for one character of the target (any code point; in a JSON string, escapes included).
std::string any_char_gbnf(GbnfWriter& writer, RegexTarget target);

// The expression for one character from `ranges` in the target encoding.
std::string char_set_gbnf(GbnfWriter& writer, const std::vector<CodepointRange>& ranges, RegexTarget target);

}  // namespace kairo::grammar
