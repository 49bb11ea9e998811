#pragma once
// Recursive-descent parser following Jinja2's grammar and operator precedence (parser.py): conditional
// expressions, or/and/not, chained comparisons, + -, ~, * / // %, ** (left-associative, as in Jinja),
// unary minus, postfix subscripts/calls, then filters and tests.
#include <string>

#include "tokenizer/jinja/ast.h"
#include "tokenizer/jinja/lexer.h"

namespace kairo::jinja {

// Deepest nesting of expressions or blocks a template may use; keeps parsing and evaluation off the C++ stack's
// limits for hostile input.
inline constexpr int kMaxParseDepth = 128;

// Throws TemplateError (Kind::Syntax) naming the line and what was expected.
Template parse_template(const std::string& source, const LexOptions& options);

}  // namespace kairo::jinja
