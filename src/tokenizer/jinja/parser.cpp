// Parser entry point: tokenizes the source and parses the whole template. The Parser class is in parser_state.h;
// its statement and expression halves are in parser_statements.cpp and parser_expressions.cpp.
#include "tokenizer/jinja/parser.h"

#include <string>

#include "tokenizer/jinja/parser_state.h"

namespace kairo::jinja {

Template detail::Parser::parse() {
  Template t;
  t.body = parse_body({}, "");
  if (cur().type != TokenType::Eof) error("unexpected '" + cur().value + "'");
  return t;
}

Template parse_template(const std::string& source, const LexOptions& options) {
  return detail::Parser(tokenize(source, options)).parse();
}

}  // namespace kairo::jinja
