#pragma once
// The Parser class shared by parser.cpp (entry point), parser_statements.cpp (block tags) and
// parser_expressions.cpp (expressions): the token cursor, nesting counters and the token-level helpers.
#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tokenizer/jinja/ast.h"
#include "tokenizer/jinja/error.h"
#include "tokenizer/jinja/lexer.h"
#include "tokenizer/jinja/parser.h"

namespace kairo::jinja::detail {

class Parser {
 public:
  explicit Parser(std::vector<Token> tokens) : toks_(std::move(tokens)) {}

  Template parse();

 private:
  struct DepthGuard {
    explicit DepthGuard(Parser& p) : p(p) {
      if (++p.depth_ > kMaxParseDepth)
        p.error("template nests expressions or blocks deeper than " + std::to_string(kMaxParseDepth) + " levels");
    }
    ~DepthGuard() { --p.depth_; }
    Parser& p;
  };

  const Token& cur() const { return toks_[pos_]; }
  const Token& peek(size_t k = 1) const { return toks_[std::min(pos_ + k, toks_.size() - 1)]; }
  void advance() {
    if (pos_ + 1 < toks_.size()) ++pos_;
  }
  [[noreturn]] void error(const std::string& msg) const {
    throw TemplateError(msg, TemplateError::Kind::Syntax, cur().line);
  }
  bool is_op(const char* op) const { return cur().type == TokenType::Op && cur().value == op; }
  bool is_name(const char* n) const { return cur().type == TokenType::Name && cur().value == n; }
  std::string describe(const Token& t) const {
    switch (t.type) {
      case TokenType::Eof: return "end of template";
      case TokenType::BlockEnd: return "end of statement block";
      case TokenType::VarEnd: return "end of print statement";
      case TokenType::String: return "string";
      default: return t.value;
    }
  }
  void expect_op(const char* op) {
    if (!is_op(op)) error(std::string("expected '") + op + "', got '" + describe(cur()) + "'");
    advance();
  }
  std::string expect_name() {
    if (cur().type != TokenType::Name) error("expected a name, got '" + describe(cur()) + "'");
    std::string n = cur().value;
    advance();
    return n;
  }
  void expect_block_end() {
    if (cur().type != TokenType::BlockEnd) error("expected end of statement block, got '" + describe(cur()) + "'");
    advance();
  }

  ExprPtr make(Expr::Kind k, int line) {
    auto e = std::make_unique<Expr>();
    e->kind = k;
    e->line = line;
    return e;
  }

  // Statements (parser_statements.cpp).

  // Parses statements until a block tag whose name is in `end_names` (left as the current token: the name after
  // `{%`), or Eof when end_names is empty. `block` names the construct being closed, for error messages.
  Body parse_body(const std::vector<std::string>& end_names, const std::string& block);
  StmtPtr parse_statement();
  Target parse_target(bool for_loop);
  void parse_params(std::vector<MacroParam>& params);

  // Expressions (parser_expressions.cpp), from the loosest binding to the tightest.

  // expression, or an implicit tuple `a, b` (as in `{% set x = 1, 2 %}`).
  ExprPtr parse_tuple_or_expr(bool no_condexpr = false);
  ExprPtr parse_expression();
  ExprPtr binary(const std::string& op, ExprPtr a, ExprPtr b, int line);
  ExprPtr parse_or();
  ExprPtr parse_and();
  ExprPtr parse_not();
  ExprPtr parse_compare();
  ExprPtr parse_math1();
  ExprPtr parse_concat();
  ExprPtr parse_math2();
  ExprPtr parse_pow();
  ExprPtr parse_unary(bool with_filter);
  ExprPtr parse_primary();
  ExprPtr parse_postfix(ExprPtr e);
  ExprPtr parse_subscript(ExprPtr target, int line);
  void parse_call_args(Expr& e);
  ExprPtr parse_call(ExprPtr callee);
  ExprPtr parse_filter_expr(ExprPtr e);
  // `| name(args)` repeated (or once when single); input may be null for {% filter %} / {% set x | f %}.
  ExprPtr parse_filter_chain(ExprPtr input, bool leading_pipe = true, bool single = false);
  ExprPtr parse_test(ExprPtr e);

  std::vector<Token> toks_;
  size_t pos_ = 0;
  int depth_ = 0;
  int loop_depth_ = 0;  // > 0 inside a for body, where break/continue are allowed
};

}  // namespace kairo::jinja::detail
