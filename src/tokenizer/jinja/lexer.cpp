#include "tokenizer/jinja/lexer.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "tokenizer/jinja/error.h"
#include "tokenizer/jinja/py_text.h"

namespace kairo::jinja {
namespace {

bool is_ws(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_name_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_name_char(char c) { return is_name_start(c) || is_digit(c); }

std::string rstrip_ws(const std::string& s) {
  // Python's str.rstrip(): Unicode whitespace, not just ASCII.
  return str_strip(s, nullptr, false, true);
}

// Template newlines become "\n" everywhere (also inside string literals) and one trailing newline is dropped,
// as Jinja2 does before lexing.
std::string normalize_source(const std::string& src) {
  std::string out;
  out.reserve(src.size());
  for (size_t i = 0; i < src.size(); ++i) {
    if (src[i] == '\r') {
      out += '\n';
      if (i + 1 < src.size() && src[i + 1] == '\n') ++i;
    } else {
      out += src[i];
    }
  }
  if (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

class Lexer {
 public:
  Lexer(const std::string& source, const LexOptions& opt) : src_(normalize_source(source)), opt_(opt) {}

  std::vector<Token> run() {
    while (pos_ < src_.size()) {
      size_t start = find_tag(pos_);
      if (start == std::string::npos) {
        emit_text(src_.substr(pos_));
        pos_ = src_.size();
        break;
      }
      std::string text = src_.substr(pos_, start - pos_);
      char kind = src_[start + 1];  // '{', '%' or '#'
      char sign = start + 2 < src_.size() && (src_[start + 2] == '-' || src_[start + 2] == '+') ? src_[start + 2] : 0;
      size_t raw_end = kind == '%' ? match_raw_begin(start) : 0;
      text = apply_lstrip(text, sign, kind != '{');
      emit_text(text);
      line_ += count_newlines(pos_, start);
      pos_ = start + 2 + (sign ? 1 : 0);
      if (raw_end) {
        line_ += count_newlines(start, raw_end);
        line_starting_ = src_[raw_end - 1] == '\n';
        pos_ = raw_end;
        lex_raw();
      } else if (kind == '#') {
        lex_comment();
      } else {
        lex_tag(kind == '{');
      }
    }
    tokens_.push_back({TokenType::Eof, "", 0, 0, line_});
    return std::move(tokens_);
  }

 private:
  [[noreturn]] void error(const std::string& msg) { throw TemplateError(msg, TemplateError::Kind::Syntax, line_); }

  int count_newlines(size_t b, size_t e) const {
    int n = 0;
    for (size_t i = b; i < e && i < src_.size(); ++i) n += src_[i] == '\n';
    return n;
  }

  size_t find_tag(size_t from) const {
    for (size_t i = from; i + 1 < src_.size(); ++i) {
      if (src_[i] == '{' && (src_[i + 1] == '{' || src_[i + 1] == '%' || src_[i + 1] == '#')) return i;
    }
    return std::string::npos;
  }

  // `{%[-+]?\s*raw\s*(-%}\s*|%})`; returns the end position or 0.
  size_t match_raw_begin(size_t start) const {
    size_t i = start + 2;
    if (i < src_.size() && (src_[i] == '-' || src_[i] == '+')) ++i;
    while (i < src_.size() && is_ws(src_[i])) ++i;
    if (src_.compare(i, 3, "raw") != 0) return 0;
    i += 3;
    while (i < src_.size() && is_ws(src_[i])) ++i;
    if (src_.compare(i, 3, "-%}") == 0) {
      i += 3;
      while (i < src_.size() && is_ws(src_[i])) ++i;
      return i;
    }
    if (src_.compare(i, 2, "%}") == 0) return i + 2;
    return 0;
  }

  std::string apply_lstrip(const std::string& text, char sign, bool strippable_tag) const {
    if (sign == '-') return rstrip_ws(text);
    if (sign == '+' || !opt_.lstrip_blocks || !strippable_tag) return text;
    size_t l_pos = text.rfind('\n');
    l_pos = l_pos == std::string::npos ? 0 : l_pos + 1;
    if (l_pos == 0 && !line_starting_) return text;
    if (l_pos == text.size()) return text;
    for (size_t i = l_pos; i < text.size(); ++i)
      if (!is_ws(text[i])) return text;
    return text.substr(0, l_pos);
  }

  void emit_text(const std::string& text) {
    if (!text.empty()) tokens_.push_back({TokenType::Text, text, 0, 0, line_});
  }

  // After a tag end: `-` strips all following whitespace, `+` nothing, otherwise trim_blocks drops one newline.
  void finish_tag_end(char sign, bool block_like) {
    size_t before = pos_;
    if (sign == '-') {
      while (pos_ < src_.size() && is_ws(src_[pos_])) ++pos_;
    } else if (sign != '+' && block_like && opt_.trim_blocks && pos_ < src_.size() && src_[pos_] == '\n') {
      ++pos_;
    }
    line_ += count_newlines(before, pos_);
    line_starting_ = pos_ > 0 && src_[pos_ - 1] == '\n';
  }

  void lex_comment() {
    size_t content = pos_;
    size_t end = src_.find("#}", content);
    if (end == std::string::npos) error("Missing end of comment tag");
    char sign = 0;
    if (end > content && (src_[end - 1] == '-' || src_[end - 1] == '+')) sign = src_[end - 1];
    line_ += count_newlines(content, end + 2);
    pos_ = end + 2;
    finish_tag_end(sign, true);
  }

  void lex_raw() {
    // Find `{%[-+]?\s*endraw\s*(+%}|-%}\s*|%}\n?)`.
    size_t search = pos_;
    while (true) {
      size_t start = src_.find("{%", search);
      if (start == std::string::npos) error("Missing end of raw directive");
      size_t i = start + 2;
      char sign = 0;
      if (i < src_.size() && (src_[i] == '-' || src_[i] == '+')) sign = src_[i++];
      while (i < src_.size() && is_ws(src_[i])) ++i;
      if (src_.compare(i, 6, "endraw") != 0) { search = start + 2; continue; }
      i += 6;
      while (i < src_.size() && is_ws(src_[i])) ++i;
      char end_sign = 0;
      if (i < src_.size() && (src_[i] == '-' || src_[i] == '+')) end_sign = src_[i++];
      if (src_.compare(i, 2, "%}") != 0) { search = start + 2; continue; }
      std::string text = apply_lstrip(src_.substr(pos_, start - pos_), sign, true);
      emit_text(text);
      line_ += count_newlines(pos_, i + 2);
      pos_ = i + 2;
      finish_tag_end(end_sign, true);
      return;
    }
  }

  void lex_tag(bool is_var) {
    tokens_.push_back({is_var ? TokenType::VarBegin : TokenType::BlockBegin, "", 0, 0, line_});
    std::vector<char> balance;
    while (true) {
      if (pos_ >= src_.size()) error(is_var ? "unexpected end of template, expected 'end of print statement'."
                                             : "unexpected end of template, expected 'end of statement block'.");
      char c = src_[pos_];
      if (is_ws(c)) {
        line_ += c == '\n';
        ++pos_;
        continue;
      }
      if (balance.empty()) {
        const char* close = is_var ? "}}" : "%}";
        if ((c == '-' || (c == '+' && !is_var)) && src_.compare(pos_ + 1, 2, close) == 0) {
          pos_ += 3;
          tokens_.push_back({is_var ? TokenType::VarEnd : TokenType::BlockEnd, "", 0, 0, line_});
          finish_tag_end(c, !is_var);
          return;
        }
        if (src_.compare(pos_, 2, close) == 0) {
          pos_ += 2;
          tokens_.push_back({is_var ? TokenType::VarEnd : TokenType::BlockEnd, "", 0, 0, line_});
          finish_tag_end(0, !is_var);
          return;
        }
      }
      if (is_digit(c)) {
        lex_number(pos_ > 0 && src_[pos_ - 1] == '.');
      } else if (is_name_start(c) || static_cast<unsigned char>(c) >= 0x80) {
        size_t b = pos_;
        while (pos_ < src_.size() && (is_name_char(src_[pos_]) || static_cast<unsigned char>(src_[pos_]) >= 0x80)) ++pos_;
        tokens_.push_back({TokenType::Name, src_.substr(b, pos_ - b), 0, 0, line_});
      } else if (c == '\'' || c == '"') {
        lex_string(c);
      } else {
        lex_operator(balance);
      }
    }
  }

  void lex_number(bool after_dot) {
    size_t b = pos_;
    auto digits = [&](auto pred) {
      size_t s = pos_;
      while (pos_ < src_.size() && (pred(src_[pos_]) || (src_[pos_] == '_' && pos_ + 1 < src_.size() && pred(src_[pos_ + 1]) && pos_ > s)))
        ++pos_;
      return pos_ > s;
    };
    if (src_[pos_] == '0' && pos_ + 1 < src_.size() && std::strchr("xXoObB", src_[pos_ + 1])) {
      char k = static_cast<char>(src_[pos_ + 1] | 0x20);
      int base = k == 'x' ? 16 : k == 'o' ? 8 : 2;
      pos_ += 2;
      size_t ds = pos_;
      auto pred = [base](char ch) {
        if (base == 16) return is_digit(ch) || ((ch | 0x20) >= 'a' && (ch | 0x20) <= 'f');
        return ch >= '0' && ch < '0' + base;
      };
      if (!digits(pred)) error("invalid integer literal");
      std::string d;
      for (size_t i = ds; i < pos_; ++i)
        if (src_[i] != '_') d += src_[i];
      push_int(d, base);
      return;
    }
    digits(is_digit);
    bool is_float = false;
    if (after_dot) {  // `a.0.1` is two subscripts, never a float (Jinja's (?<!\.) rule)
      std::string d;
      for (size_t i = b; i < pos_; ++i)
        if (src_[i] != '_') d += src_[i];
      push_int(d, 10);
      return;
    }
    if (pos_ + 1 < src_.size() && src_[pos_] == '.' && is_digit(src_[pos_ + 1])) {
      ++pos_;
      digits(is_digit);
      is_float = true;
    }
    if (pos_ < src_.size() && (src_[pos_] == 'e' || src_[pos_] == 'E')) {
      size_t save = pos_;
      ++pos_;
      if (pos_ < src_.size() && (src_[pos_] == '+' || src_[pos_] == '-')) ++pos_;
      if (digits(is_digit)) is_float = true;
      else pos_ = save;
    }
    std::string text;
    for (size_t i = b; i < pos_; ++i)
      if (src_[i] != '_') text += src_[i];
    if (is_float) {
      tokens_.push_back({TokenType::Float, text, 0, std::strtod(text.c_str(), nullptr), line_});
    } else {
      push_int(text, 10);
    }
  }

  void push_int(const std::string& digits, int base) {
    errno = 0;
    char* end = nullptr;
    long long v = std::strtoll(digits.c_str(), &end, base);
    if (errno == ERANGE) error("integer literal " + digits + " does not fit in 64 bits");
    tokens_.push_back({TokenType::Int, digits, static_cast<int64_t>(v), 0, line_});
  }

  static int hex_value(char c) {
    if (is_digit(c)) return c - '0';
    c = static_cast<char>(c | 0x20);
    return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
  }

  // Python string-literal escapes ("unicode-escape"); unknown escapes keep their backslash.
  void lex_string(char quote) {
    int start_line = line_;
    ++pos_;
    std::string out;
    while (true) {
      if (pos_ >= src_.size()) error("unexpected end of string");
      char c = src_[pos_];
      if (c == quote) { ++pos_; break; }
      if (c == '\n') ++line_;
      if (c != '\\') { out += c; ++pos_; continue; }
      if (pos_ + 1 >= src_.size()) error("unexpected end of string");
      char e = src_[pos_ + 1];
      pos_ += 2;
      switch (e) {
        case 'n': out += '\n'; break;
        case 't': out += '\t'; break;
        case 'r': out += '\r'; break;
        case 'a': out += '\a'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'v': out += '\v'; break;
        case '\\': out += '\\'; break;
        case '\'': out += '\''; break;
        case '"': out += '"'; break;
        case '\n': ++line_; break;  // line continuation
        case 'x':
        case 'u':
        case 'U': {
          int n = e == 'x' ? 2 : e == 'u' ? 4 : 8;
          uint32_t cp = 0;
          for (int k = 0; k < n; ++k) {
            int h = pos_ < src_.size() ? hex_value(src_[pos_]) : -1;
            if (h < 0) error(std::string("truncated \\") + e + " escape in string literal");
            cp = cp * 16 + h;
            ++pos_;
          }
          if (cp > 0x10FFFF) error("illegal Unicode character in string literal");
          utf8_append(out, cp);
          break;
        }
        default:
          if (e >= '0' && e <= '7') {
            uint32_t cp = e - '0';
            for (int k = 0; k < 2 && pos_ < src_.size() && src_[pos_] >= '0' && src_[pos_] <= '7'; ++k)
              cp = cp * 8 + (src_[pos_++] - '0');
            utf8_append(out, cp);
          } else {
            out += '\\';
            out += e;
          }
      }
    }
    tokens_.push_back({TokenType::String, std::move(out), 0, 0, start_line});
  }

  void lex_operator(std::vector<char>& balance) {
    static const char* kTwo[] = {"//", "**", "==", "!=", ">=", "<="};
    for (const char* op : kTwo) {
      if (src_.compare(pos_, 2, op) == 0) {
        tokens_.push_back({TokenType::Op, op, 0, 0, line_});
        pos_ += 2;
        return;
      }
    }
    char c = src_[pos_];
    if (!std::strchr("+-/*%~[](){}><=.:|,;", c)) error(std::string("unexpected char '") + c + "'");
    if (c == '(' || c == '[' || c == '{') balance.push_back(c == '(' ? ')' : c == '[' ? ']' : '}');
    if (c == ')' || c == ']' || c == '}') {
      if (balance.empty()) error(std::string("unexpected '") + c + "'");
      if (balance.back() != c) error(std::string("unexpected '") + c + "', expected '" + balance.back() + "'");
      balance.pop_back();
    }
    tokens_.push_back({TokenType::Op, std::string(1, c), 0, 0, line_});
    ++pos_;
  }

  std::string src_;
  LexOptions opt_;
  size_t pos_ = 0;
  int line_ = 1;
  bool line_starting_ = true;
  std::vector<Token> tokens_;
};

}  // namespace

std::vector<Token> tokenize(const std::string& source, const LexOptions& options) {
  return Lexer(source, options).run();
}

}  // namespace kairo::jinja
