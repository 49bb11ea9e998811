#pragma once
// Splits template source into text and tag tokens with Jinja2's exact whitespace rules (trim_blocks,
// lstrip_blocks, `-`/`+` markers, raw blocks, comments, the single trailing newline it drops).
#include <cstdint>
#include <string>
#include <vector>

namespace kairo::jinja {

enum class TokenType { Text, VarBegin, VarEnd, BlockBegin, BlockEnd, Name, String, Int, Float, Op, Eof };

struct Token {
  TokenType type;
  std::string value;  // text, name, operator, or decoded string literal
  int64_t int_value = 0;
  double float_value = 0;
  int line = 1;
};

struct LexOptions {
  bool trim_blocks = true;
  bool lstrip_blocks = true;
};

// Throws TemplateError (Kind::Syntax) with the line on malformed input.
std::vector<Token> tokenize(const std::string& source, const LexOptions& options);

}  // namespace kairo::jinja
