// Statement parsing: the template body (text, {{ }} output, {% %} tags) and each block tag Jinja supports in a
// standalone template (if, for, set, macro, call, filter, with, break/continue, block/generation).
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "tokenizer/jinja/parser_state.h"

namespace kairo::jinja::detail {

Body Parser::parse_body(const std::vector<std::string>& end_names, const std::string& block) {
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

StmtPtr Parser::parse_statement() {
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

Target Parser::parse_target(bool for_loop) {
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

void Parser::parse_params(std::vector<MacroParam>& params) {
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

}  // namespace kairo::jinja::detail
