#include "tokenizer/jinja/parser.h"

#include <algorithm>

#include <vector>

#include "tokenizer/jinja/error.h"

namespace kairo::jinja {
namespace {

class Parser {
 public:
  explicit Parser(std::vector<Token> tokens) : toks_(std::move(tokens)) {}

  Template parse() {
    Template t;
    t.body = parse_body({}, "");
    if (cur().type != TokenType::Eof) error("unexpected '" + cur().value + "'");
    return t;
  }

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

  // Parses statements until a block tag whose name is in `end_names` (left as the current token: the name after
  // `{%`), or Eof when end_names is empty. `block` names the construct being closed, for error messages.
  Body parse_body(const std::vector<std::string>& end_names, const std::string& block) {
    DepthGuard guard(*this);
    Body body;
    while (true) {
      const Token& t = cur();
      if (t.type == TokenType::Eof) {
        if (!end_names.empty()) {
          std::string tags;
          for (const auto& n : end_names) tags += (tags.empty() ? "'" : " or '") + n + "'";
          error("Unexpected end of template. Jinja was looking for the following tags: " + tags +
                ". The innermost block that needs to be closed is '" + block + "'.");
        }
        return body;
      }
      if (t.type == TokenType::Text) {
        auto s = std::make_unique<Stmt>();
        s->kind = Stmt::Kind::Text;
        s->line = t.line;
        s->text = t.value;
        body.push_back(std::move(s));
        advance();
      } else if (t.type == TokenType::VarBegin) {
        auto s = std::make_unique<Stmt>();
        s->kind = Stmt::Kind::Output;
        s->line = t.line;
        advance();
        s->expr = parse_tuple_or_expr();
        if (cur().type != TokenType::VarEnd) error("expected end of print statement, got '" + describe(cur()) + "'");
        advance();
        body.push_back(std::move(s));
      } else if (t.type == TokenType::BlockBegin) {
        const Token& name = peek();
        if (name.type != TokenType::Name) {
          advance();
          error("expected a statement name after '{%'");
        }
        if (std::find(end_names.begin(), end_names.end(), name.value) != end_names.end()) {
          advance();  // leave the tag name as the current token
          return body;
        }
        advance();
        body.push_back(parse_statement());
      } else {
        error("unexpected '" + describe(t) + "'");
      }
    }
  }

  StmtPtr parse_statement() {
    const Token& t = cur();
    std::string kw = t.value;
    int line = t.line;
    advance();
    auto s = std::make_unique<Stmt>();
    s->line = line;
    if (kw == "if") {
      s->kind = Stmt::Kind::If;
      ExprPtr cond = parse_tuple_or_expr();
      expect_block_end();
      while (true) {
        Body b = parse_body({"elif", "else", "endif"}, "if");
        s->branches.emplace_back(std::move(cond), std::move(b));
        std::string tag = expect_name();
        if (tag == "elif") {
          cond = parse_tuple_or_expr();
          expect_block_end();
        } else if (tag == "else") {
          expect_block_end();
          s->branches.emplace_back(nullptr, parse_body({"endif"}, "if"));
          advance();
          expect_block_end();
          break;
        } else {
          expect_block_end();
          break;
        }
      }
    } else if (kw == "for") {
      s->kind = Stmt::Kind::For;
      s->target = parse_target(true);
      if (!is_name("in")) error("expected 'in' in for loop, got '" + describe(cur()) + "'");
      advance();
      s->expr = parse_tuple_or_expr(/*no_condexpr=*/true);
      if (is_name("if")) {
        advance();
        s->loop_filter = parse_expression();
      }
      if (is_name("recursive")) error("recursive for loops are not supported");
      expect_block_end();
      ++loop_depth_;
      s->body = parse_body({"endfor", "else"}, "for");
      --loop_depth_;
      if (expect_name() == "else") {
        expect_block_end();
        s->else_body = parse_body({"endfor"}, "for");
        advance();
      }
      expect_block_end();
    } else if (kw == "set") {
      s->target = parse_target(false);
      if (is_op("=")) {
        s->kind = Stmt::Kind::Set;
        advance();
        s->expr = parse_tuple_or_expr();
        expect_block_end();
      } else {
        s->kind = Stmt::Kind::SetBlock;
        if (s->target.is_tuple) error("a block assignment needs a single target name");
        if (is_op("|")) s->expr = parse_filter_chain(nullptr);
        expect_block_end();
        s->body = parse_body({"endset"}, "set");
        advance();
        expect_block_end();
      }
    } else if (kw == "macro") {
      s->kind = Stmt::Kind::Macro;
      s->text = expect_name();
      parse_params(s->params);
      expect_block_end();
      s->body = parse_body({"endmacro"}, "macro");
      advance();
      if (cur().type == TokenType::Name) advance();  // {% endmacro name %}
      expect_block_end();
    } else if (kw == "call") {
      s->kind = Stmt::Kind::CallBlock;
      if (is_op("(")) parse_params(s->params);
      s->expr = parse_expression();
      if (s->expr->kind != Expr::Kind::Call) error("expected a call after {% call %}");
      expect_block_end();
      s->body = parse_body({"endcall"}, "call");
      advance();
      expect_block_end();
    } else if (kw == "filter") {
      s->kind = Stmt::Kind::FilterBlock;
      s->expr = parse_filter_chain(nullptr, /*leading_pipe=*/false);
      expect_block_end();
      s->body = parse_body({"endfilter"}, "filter");
      advance();
      expect_block_end();
    } else if (kw == "with") {
      s->kind = Stmt::Kind::With;
      while (cur().type != TokenType::BlockEnd) {
        if (!s->assignments.empty()) expect_op(",");
        Target tg = parse_target(false);
        expect_op("=");
        s->assignments.emplace_back(std::move(tg), parse_expression());
      }
      expect_block_end();
      s->body = parse_body({"endwith"}, "with");
      advance();
      expect_block_end();
    } else if (kw == "break" || kw == "continue") {
      s->kind = kw == "break" ? Stmt::Kind::Break : Stmt::Kind::Continue;
      if (loop_depth_ == 0) error("'" + kw + "' outside of a for loop");
      expect_block_end();
    } else if (kw == "generation" || kw == "block") {
      // `generation` is Hugging Face's assistant-mask marker; `block` renders in place in a standalone template.
      s->kind = Stmt::Kind::Block;
      if (kw == "block") {
        expect_name();
        if (is_name("scoped")) advance();
      }
      expect_block_end();
      s->body = parse_body({"end" + kw}, kw);
      advance();
      if (cur().type == TokenType::Name) advance();
      expect_block_end();
    } else if (kw == "include" || kw == "import" || kw == "from" || kw == "extends") {
      error("'" + kw + "' is not available: chat templates are rendered standalone, without loading other files");
    } else {
      error("Encountered unknown tag '" + kw + "'.");
    }
    return s;
  }

  Target parse_target(bool for_loop) {
    Target t;
    if (is_op("(")) {
      advance();
      t.is_tuple = true;
      while (!is_op(")")) {
        if (!t.names.empty()) expect_op(",");
        if (is_op(")")) break;
        t.names.push_back(expect_name());
      }
      advance();
      return t;
    }
    t.names.push_back(expect_name());
    if (!for_loop && is_op(".")) {
      advance();
      t.ns_attr = expect_name();
      return t;
    }
    while (is_op(",")) {
      t.is_tuple = true;
      advance();
      if (cur().type != TokenType::Name || is_name("in")) break;
      t.names.push_back(expect_name());
    }
    return t;
  }

  void parse_params(std::vector<MacroParam>& params) {
    expect_op("(");
    while (!is_op(")")) {
      if (!params.empty()) expect_op(",");
      MacroParam p;
      p.name = expect_name();
      if (is_op("=")) {
        advance();
        p.default_value = parse_expression();
      } else if (!params.empty() && params.back().default_value) {
        error("non-default argument '" + p.name + "' follows default argument");
      }
      params.push_back(std::move(p));
    }
    advance();
  }

  // expression, or an implicit tuple `a, b` (as in `{% set x = 1, 2 %}`).
  ExprPtr parse_tuple_or_expr(bool no_condexpr = false) {
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

  ExprPtr parse_expression() {
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

  ExprPtr binary(const std::string& op, ExprPtr a, ExprPtr b, int line) {
    auto e = make(Expr::Kind::Binary, line);
    e->name = op;
    e->args.push_back(std::move(a));
    e->args.push_back(std::move(b));
    return e;
  }

  ExprPtr parse_or() {
    int line = cur().line;
    ExprPtr e = parse_and();
    while (is_name("or")) {
      advance();
      e = binary("or", std::move(e), parse_and(), line);
    }
    return e;
  }
  ExprPtr parse_and() {
    int line = cur().line;
    ExprPtr e = parse_not();
    while (is_name("and")) {
      advance();
      e = binary("and", std::move(e), parse_not(), line);
    }
    return e;
  }
  ExprPtr parse_not() {
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
  ExprPtr parse_compare() {
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
  ExprPtr parse_math1() {
    int line = cur().line;
    ExprPtr e = parse_concat();
    while (is_op("+") || is_op("-")) {
      std::string op = cur().value;
      advance();
      e = binary(op, std::move(e), parse_concat(), line);
    }
    return e;
  }
  ExprPtr parse_concat() {
    int line = cur().line;
    ExprPtr e = parse_math2();
    while (is_op("~")) {
      advance();
      e = binary("~", std::move(e), parse_math2(), line);
    }
    return e;
  }
  ExprPtr parse_math2() {
    int line = cur().line;
    ExprPtr e = parse_pow();
    while (is_op("*") || is_op("/") || is_op("//") || is_op("%")) {
      std::string op = cur().value;
      advance();
      e = binary(op, std::move(e), parse_pow(), line);
    }
    return e;
  }
  ExprPtr parse_pow() {
    int line = cur().line;
    ExprPtr e = parse_unary(true);
    while (is_op("**")) {
      advance();
      e = binary("**", std::move(e), parse_unary(true), line);
    }
    return e;
  }
  ExprPtr parse_unary(bool with_filter) {
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

  ExprPtr parse_primary() {
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

  ExprPtr parse_postfix(ExprPtr e) {
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

  ExprPtr parse_subscript(ExprPtr target, int line) {
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

  void parse_call_args(Expr& e) {
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

  ExprPtr parse_call(ExprPtr callee) {
    auto c = make(Expr::Kind::Call, cur().line);
    c->args.push_back(std::move(callee));
    parse_call_args(*c);
    return c;
  }

  ExprPtr parse_filter_expr(ExprPtr e) {
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

  // `| name(args)` repeated (or once when single); input may be null for {% filter %} / {% set x | f %}.
  ExprPtr parse_filter_chain(ExprPtr input, bool leading_pipe = true, bool single = false) {
    bool first = true;
    while (first || is_op("|")) {
      if (!first || leading_pipe) expect_op("|");
      first = false;
      int line = cur().line;
      auto f = make(Expr::Kind::Filter, line);
      f->name = expect_name();
      while (is_op(".")) {
        advance();
        f->name += "." + expect_name();
      }
      f->args.push_back(std::move(input));
      if (is_op("(")) parse_call_args(*f);
      input = std::move(f);
      if (single) break;
    }
    return input;
  }

  ExprPtr parse_test(ExprPtr e) {
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

  std::vector<Token> toks_;
  size_t pos_ = 0;
  int depth_ = 0;
  int loop_depth_ = 0;  // > 0 inside a for body, where break/continue are allowed
};

}  // namespace

Template parse_template(const std::string& source, const LexOptions& options) {
  return Parser(tokenize(source, options)).parse();
}

}  // namespace kairo::jinja
