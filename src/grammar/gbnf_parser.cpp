#include "grammar/gbnf_parser.h"

#include <algorithm>
#include <optional>

#include "core/format.h"
#include "grammar/codepoint_ranges.h"

namespace kairo::grammar {
namespace {

AstNode make_node(AstNode::Kind kind, int line) {
  AstNode n;
  n.kind = kind;
  n.line = line;
  return n;
}

bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
}

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  Result<GrammarAst> parse() {
    skip_space(true);
    while (!at_end() && ok()) {
      parse_rule();
      skip_space(true);
    }
    if (!ok()) return Error{*error_};
    if (ast_.rules.empty()) return Error{"the grammar has no rules; write at least `root ::= ...`"};
    return std::move(ast_);
  }

 private:
  bool ok() const { return !error_.has_value(); }
  bool at_end() const { return pos_ >= text_.size(); }
  char peek(size_t ahead = 0) const { return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0'; }

  void fail(const std::string& what) {
    if (error_) return;
    int line = 1, column = 1;
    for (size_t i = 0; i < pos_ && i < text_.size(); ++i) {
      if (text_[i] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    error_ = strprintf("grammar: line %d, column %d: %s", line, column, what.c_str());
  }

  int line() const { return 1 + static_cast<int>(std::count(text_.begin(), text_.begin() + pos_, '\n')); }

  void skip_space(bool newline_ok) {
    while (!at_end()) {
      const char c = peek();
      if (c == ' ' || c == '\t') {
        ++pos_;
      } else if (c == '#') {
        while (!at_end() && peek() != '\n' && peek() != '\r') ++pos_;
      } else if (newline_ok && (c == '\n' || c == '\r')) {
        ++pos_;
      } else {
        break;
      }
    }
  }

  std::string parse_name() {
    const size_t start = pos_;
    while (!at_end() && is_name_char(peek())) ++pos_;
    return std::string(text_.substr(start, pos_ - start));
  }

  void parse_rule() {
    const int rule_line = line();
    std::string name = parse_name();
    if (name.empty()) return fail(strprintf("expected a rule name, found %s", describe_here().c_str()));
    skip_space(false);
    if (text_.substr(pos_, 3) != "::=") return fail(strprintf("expected '::=' after rule name '%s'", name.c_str()));
    pos_ += 3;
    skip_space(true);
    if (ast_.find(name)) return fail(strprintf("rule '%s' is defined twice; merge the definitions with '|'", name.c_str()));
    AstRule rule{name, parse_alternatives(false), rule_line};
    if (!ok()) return;
    if (!at_end() && peek() != '\n' && peek() != '\r') {
      return fail(strprintf("expected the end of the line after rule '%s', found %s", name.c_str(),
                            describe_here().c_str()));
    }
    ast_.rules.push_back(std::move(rule));
  }

  AstAlternatives parse_alternatives(bool nested) {
    AstAlternatives alts;
    alts.push_back(parse_sequence(nested));
    while (ok() && continues_with_bar()) {
      ++pos_;
      skip_space(true);
      alts.push_back(parse_sequence(nested));
    }
    return alts;
  }

  // True at a '|', also when it starts a following line of a top-level rule (a rule never starts with '|').
  bool continues_with_bar() {
    if (peek() == '|') return true;
    const size_t here = pos_;
    skip_space(true);
    if (peek() == '|') return true;
    pos_ = here;
    return false;
  }

  AstSequence parse_sequence(bool nested) {
    AstSequence seq;
    while (ok() && !at_end()) {
      const char c = peek();
      const int here = line();
      if (c == '"') {
        ++pos_;
        AstNode node = make_node(AstNode::Kind::kLiteral, here);
        while (ok() && peek() != '"') {
          if (at_end() || peek() == '\n') return fail("unterminated string literal: add the closing '\"'"), seq;
          node.literal.push_back(parse_char());
        }
        ++pos_;
        seq.push_back(std::move(node));
      } else if (c == '[') {
        seq.push_back(parse_char_class());
      } else if (c == '.') {
        ++pos_;
        AstNode any = make_node(AstNode::Kind::kCharClass, here);
        any.ranges = {{0, kMaxCodepoint}};
        seq.push_back(std::move(any));
      } else if (is_name_char(c)) {
        const size_t before = pos_;
        std::string name = parse_name();
        // `name ::=` on the same logical line means a missing newline before the next rule.
        size_t look = pos_;
        while (look < text_.size() && (text_[look] == ' ' || text_[look] == '\t')) ++look;
        if (text_.substr(look, 3) == "::=") {
          pos_ = before;
          return fail(strprintf("rule '%s' starts inside another rule; put each rule on its own line", name.c_str())),
                 seq;
        }
        AstNode ref = make_node(AstNode::Kind::kRuleRef, here);
        ref.rule = std::move(name);
        seq.push_back(std::move(ref));
      } else if (c == '(') {
        ++pos_;
        skip_space(true);
        AstNode node = make_node(AstNode::Kind::kGroup, here);
        node.alternatives = parse_alternatives(true);
        if (!ok()) return seq;
        if (peek() != ')') return fail(strprintf("expected ')' to close the group, found %s", describe_here().c_str())), seq;
        ++pos_;
        seq.push_back(std::move(node));
      } else if (c == '*' || c == '+' || c == '?') {
        ++pos_;
        const uint32_t min = c == '+' ? 1 : 0;
        const uint32_t max = c == '?' ? 1 : kUnboundedRepeat;
        if (!wrap_repeat(seq, min, max, c)) return seq;
      } else if (c == '{') {
        if (!parse_braces(seq)) return seq;
      } else {
        break;
      }
      skip_space(nested);
    }
    return seq;
  }

  bool wrap_repeat(AstSequence& seq, uint32_t min, uint32_t max, char op) {
    if (seq.empty()) {
      fail(strprintf("'%c' must follow an item to repeat", op));
      return false;
    }
    AstNode node = make_node(AstNode::Kind::kRepeat, seq.back().line);
    node.min = min;
    node.max = max;
    node.alternatives.push_back(AstSequence{std::move(seq.back())});
    seq.back() = std::move(node);
    return true;
  }

  std::optional<uint32_t> parse_count() {
    const size_t start = pos_;
    uint64_t v = 0;
    while (peek() >= '0' && peek() <= '9') {
      v = v * 10 + static_cast<uint64_t>(peek() - '0');
      if (v > kMaxRepeatBound) {
        fail(strprintf("repetition bound above %u; use '*' or '+' for an unbounded repetition", kMaxRepeatBound));
        return std::nullopt;
      }
      ++pos_;
    }
    if (pos_ == start) return std::nullopt;
    return static_cast<uint32_t>(v);
  }

  bool parse_braces(AstSequence& seq) {
    ++pos_;  // '{'
    skip_space(false);
    const auto min = parse_count();
    if (!ok()) return false;
    if (!min) {
      fail("expected a number after '{'");
      return false;
    }
    skip_space(false);
    uint32_t max = *min;
    if (peek() == ',') {
      ++pos_;
      skip_space(false);
      const auto upper = parse_count();
      if (!ok()) return false;
      max = upper ? *upper : kUnboundedRepeat;
      skip_space(false);
    }
    if (peek() != '}') {
      fail(strprintf("expected '}' to close the repetition, found %s", describe_here().c_str()));
      return false;
    }
    ++pos_;
    if (max < *min) {
      fail(strprintf("repetition {%u,%u} has its maximum below its minimum", *min, max));
      return false;
    }
    return wrap_repeat(seq, *min, max, '{');
  }

  AstNode parse_char_class() {
    AstNode node = make_node(AstNode::Kind::kCharClass, line());
    ++pos_;  // '['
    bool negated = false;
    if (peek() == '^') {
      negated = true;
      ++pos_;
    }
    std::vector<CodepointRange> ranges;
    while (ok() && peek() != ']') {
      if (at_end() || peek() == '\n') {
        fail("unterminated character class: add the closing ']'");
        return node;
      }
      const uint32_t lo = parse_char();
      uint32_t hi = lo;
      if (peek() == '-' && peek(1) != ']' && peek(1) != '\n' && pos_ + 1 < text_.size()) {
        ++pos_;
        hi = parse_char();
        if (hi < lo) {
          fail(strprintf("character range U+%04X-U+%04X is reversed", lo, hi));
          return node;
        }
      }
      ranges.push_back({lo, hi});
    }
    ++pos_;  // ']'
    node.ranges = normalize_ranges(std::move(ranges));
    if (negated) node.ranges = complement_ranges(node.ranges);
    return node;
  }

  // One code point of a literal or class: an escape or a UTF-8 encoded character.
  uint32_t parse_char() {
    const auto c = static_cast<unsigned char>(peek());
    if (c == '\\') {
      ++pos_;
      const char e = peek();
      ++pos_;
      switch (e) {
        case 'n': return '\n';
        case 'r': return '\r';
        case 't': return '\t';
        case '\\': case '"': case '[': case ']': case '-': case '^': return static_cast<unsigned char>(e);
        case 'x': return parse_hex(2);
        case 'u': return parse_hex(4);
        case 'U': return parse_hex(8);
        default:
          --pos_;
          fail(strprintf("unknown escape '\\%c'; use \\n \\r \\t \\\\ \\\" \\[ \\] \\xHH \\uHHHH or \\UHHHHHHHH", e));
          return 0;
      }
    }
    int len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
    if (len == 0 || pos_ + len > text_.size()) {
      fail("the grammar text is not valid UTF-8 here");
      return 0;
    }
    uint32_t cp = len == 1 ? c : c & (0x3F >> (len - 1));
    for (int i = 1; i < len; ++i) {
      const auto b = static_cast<unsigned char>(text_[pos_ + i]);
      if ((b & 0xC0) != 0x80) {
        fail("the grammar text is not valid UTF-8 here");
        return 0;
      }
      cp = (cp << 6) | (b & 0x3F);
    }
    pos_ += len;
    return cp;
  }

  uint32_t parse_hex(int digits) {
    uint32_t v = 0;
    for (int i = 0; i < digits; ++i) {
      const char h = peek();
      int d = (h >= '0' && h <= '9') ? h - '0' : (h >= 'a' && h <= 'f') ? h - 'a' + 10 : (h >= 'A' && h <= 'F') ? h - 'A' + 10 : -1;
      if (d < 0) {
        fail(strprintf("expected %d hex digits in the escape", digits));
        return 0;
      }
      v = v * 16 + static_cast<uint32_t>(d);
      ++pos_;
    }
    if (v > kMaxCodepoint || (v >= 0xD800 && v <= 0xDFFF)) {
      fail(strprintf("escape U+%X is not a Unicode scalar value", v));
      return 0;
    }
    return v;
  }

  std::string describe_here() const {
    if (at_end()) return "the end of the grammar";
    const char c = peek();
    if (c == '\n' || c == '\r') return "the end of the line";
    std::string_view rest = text_.substr(pos_, 12);
    rest = rest.substr(0, rest.find_first_of("\r\n"));
    return quote_for_error(std::string(rest));
  }

  std::string_view text_;
  size_t pos_ = 0;
  GrammarAst ast_;
  std::optional<std::string> error_;
};

}  // namespace

Result<GrammarAst> parse_gbnf(std::string_view text) { return Parser(text).parse(); }

}  // namespace kairo::grammar
