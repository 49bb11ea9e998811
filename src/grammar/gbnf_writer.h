#pragma once
// Builds GBNF text for grammars generated from other descriptions (JSON Schema, regular expressions): unique rule
// names, identical rule bodies shared under one name, and the quoting of literals and character classes. The
// output is ordinary GBNF, so a generated grammar can be printed, read and edited like a hand-written one.
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "grammar/grammar_ast.h"

namespace kairo::grammar {

class GbnfWriter {
 public:
  // Adds `name ::= body` under a fresh name derived from name_hint (a body added before returns its name).
  std::string add_rule(std::string_view name_hint, const std::string& body);
  // Reserves a fresh name now and gives it a body later (recursive rules reference themselves).
  std::string reserve(std::string_view name_hint);
  void define(const std::string& name, const std::string& body);

  std::string text(const std::string& root_body) const;  // "root ::= root_body" and every rule

  static std::string literal(std::string_view utf8);                   // "..." with GBNF escapes
  static std::string char_class(const std::vector<CodepointRange>& ranges);  // [...] with escapes

 private:
  std::string fresh_name(std::string_view hint);

  std::vector<std::pair<std::string, std::string>> rules_;  // name, body (empty until defined)
  std::map<std::string, std::string> name_of_body_;
  std::map<std::string, int> hint_uses_;
};

}  // namespace kairo::grammar
