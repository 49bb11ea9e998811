// Expression parsing, one method per precedence level of Jinja2's grammar (see parser.h), then primaries, postfix
// subscripts and calls, filters and tests.
#include <memory>
#include <string>

#include "tokenizer/jinja/parser_state.h"

namespace kairo::jinja::detail {

ExprPtr Parser::parse_tuple_or_expr(bool no_condexpr) {
  int line = cur().line;
  ExprPtr first = no_condexpr ? parse_or() : parse_expression();
  if (!is_op(",")) return first;
  auto t = make(Expr::Kind::Tuple, line);
  t->args.push_back(std::move(first));
  while (is_op(",")) {
    advance();
    if (cur().type == TokenType::BlockEnd || cur().type == TokenType::VarEnd || is_name("in") || is_name("if")) break;
    t->args.push_back(no_condexpr ? parse_or() : parse_expression());
  }
  return t;
}

ExprPtr Parser::parse_expression() {
  DepthGuard guard(*this);
  int line = cur().line;
  ExprPtr e = parse_or();
  while (is_name("if")) {
    advance();
    auto c = make(Expr::Kind::CondExpr, line);
    ExprPtr cond = parse_or();
    ExprPtr other;
    if (is_name("else")) {
      advance();
      other = parse_expression();
    }
    c->args.push_back(std::move(cond));
    c->args.push_back(std::move(e));
    c->args.push_back(std::move(other));
    e = std::move(c);
  }
  return e;
}

ExprPtr Parser::binary(const std::string& op, ExprPtr a, ExprPtr b, int line) {
  auto e = make(Expr::Kind::Binary, line);
  e->name = op;
  e->args.push_back(std::move(a));
  e->args.push_back(std::move(b));
  return e;
}

ExprPtr Parser::parse_or() {
  int line = cur().line;
  ExprPtr e = parse_and();
  while (is_name("or")) {
    advance();
    e = binary("or", std::move(e), parse_and(), line);
  }
  return e;
}

ExprPtr Parser::parse_and() {
  int line = cur().line;
  ExprPtr e = parse_not();
  while (is_name("and")) {
    advance();
    e = binary("and", std::move(e), parse_not(), line);
  }
  return e;
}

ExprPtr Parser::parse_not() {
  if (is_name("not")) {
    DepthGuard guard(*this);
    int line = cur().line;
    advance();
    auto e = make(Expr::Kind::Unary, line);
    e->name = "not";
    e->args.push_back(parse_not());
    return e;
  }
  return parse_compare();
}

ExprPtr Parser::parse_compare() {
  int line = cur().line;
  ExprPtr first = parse_math1();
  ExprPtr cmp;
  while (true) {
    std::string op;
    if (cur().type == TokenType::Op &&
        (cur().value == "==" || cur().value == "!=" || cur().value == "<" || cur().value == ">" ||
         cur().value == "<=" || cur().value == ">=")) {
      op = cur().value;
      advance();
    } else if (is_name("in")) {
      op = "in";
      advance();
    } else if (is_name("not") && peek().type == TokenType::Name && peek().value == "in") {
      op = "notin";
      advance();
      advance();
    } else {
      break;
    }
    if (!cmp) {
      cmp = make(Expr::Kind::Compare, line);
      cmp->args.push_back(std::move(first));
    }
    cmp->ops.push_back(op);
    cmp->args.push_back(parse_math1());
  }
  return cmp ? std::move(cmp) : std::move(first);
}

ExprPtr Parser::parse_math1() {
  int line = cur().line;
  ExprPtr e = parse_concat();
  while (is_op("+") || is_op("-")) {
    std::string op = cur().value;
    advance();
    e = binary(op, std::move(e), parse_concat(), line);
  }
  return e;
}

ExprPtr Parser::parse_concat() {
  int line = cur().line;
  ExprPtr e = parse_math2();
  while (is_op("~")) {
    advance();
    e = binary("~", std::move(e), parse_math2(), line);
  }
  return e;
}

ExprPtr Parser::parse_math2() {
  int line = cur().line;
  ExprPtr e = parse_pow();
  while (is_op("*") || is_op("/") || is_op("//") || is_op("%")) {
    std::string op = cur().value;
    advance();
    e = binary(op, std::move(e), parse_pow(), line);
  }
  return e;
}

ExprPtr Parser::parse_pow() {
  int line = cur().line;
  ExprPtr e = parse_unary(true);
  while (is_op("**")) {
    advance();
    e = binary("**", std::move(e), parse_unary(true), line);
  }
  return e;
}

ExprPtr Parser::parse_unary(bool with_filter) {
  DepthGuard guard(*this);
  int line = cur().line;
  ExprPtr e;
  if (is_op("-") || is_op("+")) {
    std::string op = cur().value;
    advance();
    e = make(Expr::Kind::Unary, line);
    e->name = op;
    e->args.push_back(parse_unary(false));
  } else {
    e = parse_primary();
  }
  e = parse_postfix(std::move(e));
  if (with_filter) e = parse_filter_expr(std::move(e));
  return e;
}

ExprPtr Parser::parse_primary() {
  const Token& t = cur();
  int line = t.line;
  if (t.type == TokenType::Name) {
    std::string n = t.value;
    advance();
    auto e = make(Expr::Kind::Const, line);
    if (n == "true" || n == "True") e->constant = Value::boolean(true);
    else if (n == "false" || n == "False") e->constant = Value::boolean(false);
    else if (n == "none" || n == "None") e->constant = Value::none();
    else {
      e->kind = Expr::Kind::Name;
      e->name = n;
    }
    return e;
  }
  if (t.type == TokenType::String) {
    std::string s;
    while (cur().type == TokenType::String) {  // adjacent literals concatenate
      s += cur().value;
      advance();
    }
    auto e = make(Expr::Kind::Const, line);
    e->constant = Value::string(std::move(s));
    return e;
  }
  if (t.type == TokenType::Int || t.type == TokenType::Float) {
    auto e = make(Expr::Kind::Const, line);
    e->constant = t.type == TokenType::Int ? Value::integer(t.int_value) : Value::number(t.float_value);
    advance();
    return e;
  }
  if (is_op("(")) {
    advance();
    if (is_op(")")) {
      advance();
      return make(Expr::Kind::Tuple, line);
    }
    ExprPtr first = parse_expression();
    if (is_op(")")) {
      advance();
      return first;
    }
    auto tup = make(Expr::Kind::Tuple, line);
    tup->args.push_back(std::move(first));
    while (is_op(",")) {
      advance();
      if (is_op(")")) break;
      tup->args.push_back(parse_expression());
    }
    expect_op(")");
    return tup;
  }
  if (is_op("[")) {
    advance();
    auto l = make(Expr::Kind::List, line);
    while (!is_op("]")) {
      if (!l->args.empty()) expect_op(",");
      if (is_op("]")) break;
      l->args.push_back(parse_expression());
    }
    advance();
    return l;
  }
  if (is_op("{")) {
    advance();
    auto d = make(Expr::Kind::Dict, line);
    while (!is_op("}")) {
      if (!d->args.empty()) expect_op(",");
      if (is_op("}")) break;
      d->args.push_back(parse_expression());
      expect_op(":");
      d->args.push_back(parse_expression());
    }
    advance();
    return d;
  }
  error("Expected an expression, got '" + describe(t) + "'");
}

ExprPtr Parser::parse_postfix(ExprPtr e) {
  while (true) {
    int line = cur().line;
    if (is_op(".")) {
      advance();
      auto g = make(Expr::Kind::GetAttr, line);
      if (cur().type == TokenType::Int) {  // `x.0` is x[0]
        g->kind = Expr::Kind::GetItem;
        g->args.push_back(std::move(e));
        auto idx = make(Expr::Kind::Const, line);
        idx->constant = Value::integer(cur().int_value);
        advance();
        g->args.push_back(std::move(idx));
      } else {
        g->name = expect_name();
        g->args.push_back(std::move(e));
      }
      e = std::move(g);
    } else if (is_op("[")) {
      advance();
      e = parse_subscript(std::move(e), line);
    } else if (is_op("(")) {
      e = parse_call(std::move(e));
    } else {
      return e;
    }
  }
}

ExprPtr Parser::parse_subscript(ExprPtr target, int line) {
  ExprPtr parts[3];
  bool is_slice = false;
  int idx = 0;
  while (true) {
    if (is_op(":")) {
      is_slice = true;
      if (++idx > 2) error("invalid slice");
      advance();
      continue;
    }
    if (is_op("]")) break;
    if (parts[idx]) error("expected ']' or ':'");
    parts[idx] = parse_expression();
  }
  advance();
  auto e = make(is_slice ? Expr::Kind::Slice : Expr::Kind::GetItem, line);
  e->args.push_back(std::move(target));
  if (!is_slice) {
    if (!parts[0]) error("empty subscript");
    e->args.push_back(std::move(parts[0]));
  } else {
    for (auto& p : parts) e->args.push_back(std::move(p));
  }
  return e;
}

void Parser::parse_call_args(Expr& e) {
  expect_op("(");
  bool first = true;
  while (!is_op(")")) {
    if (!first) expect_op(",");
    first = false;
    if (is_op(")")) break;
    if (is_op("*") || is_op("**")) error("*args and **kwargs in calls are not supported");
    if (cur().type == TokenType::Name && peek().type == TokenType::Op && peek().value == "=") {
      std::string key = cur().value;
      advance();
      advance();
      e.kwargs.emplace_back(key, parse_expression());
    } else {
      if (!e.kwargs.empty()) error("positional argument follows keyword argument");
      e.args.push_back(parse_expression());
    }
  }
  advance();
}

ExprPtr Parser::parse_call(ExprPtr callee) {
  auto c = make(Expr::Kind::Call, cur().line);
  c->args.push_back(std::move(callee));
  parse_call_args(*c);
  return c;
}

ExprPtr Parser::parse_filter_expr(ExprPtr e) {
  while (true) {
    if (is_op("|")) {
      e = parse_filter_chain(std::move(e), true, /*single=*/true);
    } else if (is_name("is")) {
      e = parse_test(std::move(e));
    } else if (is_op("(")) {
      e = parse_call(std::move(e));
    } else {
      return e;
    }
  }
}

ExprPtr Parser::parse_filter_chain(ExprPtr input, bool leading_pipe, bool single) {
  bool first = true;
  while (first || is_op("|")) {
    if (!first || leading_pipe) expect_op("|");
    first = false;
    int line = cur().line;
    auto f = make(Expr::Kind::Filter, line);
    f->name = expect_name();
    while (is_op(".")) {
      advance();
      f->name += '.';
      f->name += expect_name();
    }
    f->args.push_back(std::move(input));
    if (is_op("(")) parse_call_args(*f);
    input = std::move(f);
    if (single) break;
  }
  return input;
}

ExprPtr Parser::parse_test(ExprPtr e) {
  int line = cur().line;
  advance();  // is
  bool negated = false;
  if (is_name("not")) {
    negated = true;
    advance();
  }
  auto t = make(Expr::Kind::Test, line);
  t->name = expect_name();
  t->args.push_back(std::move(e));
  const Token& c = cur();
  if (is_op("(")) {
    parse_call_args(*t);
  } else if ((c.type == TokenType::Name || c.type == TokenType::String || c.type == TokenType::Int ||
              c.type == TokenType::Float || is_op("[") || is_op("{")) &&
             !is_name("else") && !is_name("or") && !is_name("and")) {
    if (is_name("is")) error("You cannot chain multiple tests with is");
    t->args.push_back(parse_postfix(parse_primary()));
  }
  if (!negated) return t;
  auto n = make(Expr::Kind::Unary, line);
  n->name = "not";
  n->args.push_back(std::move(t));
  return n;
}

}  // namespace kairo::jinja::detail
