#include "grammar/regex_grammar.h"

#include <optional>

#include "core/format.h"
#include "grammar/codepoint_ranges.h"
#include "grammar/gbnf_parser.h"
#include "grammar/utf8_ranges.h"

namespace kairo::grammar {

namespace {

using Ranges = std::vector<CodepointRange>;

const Ranges kDigit = {{'0', '9'}};
const Ranges kWord = {{'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}};
const Ranges kSpace = {{'\t', '\r'}, {' ', ' '}};  // \t \n \v \f \r and space, as Python's re (ASCII)

std::string utf8_of(uint32_t cp) {
  const auto bytes = utf8_encode(cp);
  return std::string(bytes.begin(), bytes.end());
}

// How a JSON string writes a character that cannot appear raw in it.
std::string json_escape_of(uint32_t cp) {
  switch (cp) {
    case '"': return "\\\"";
    case '\\': return "\\\\";
    case '\b': return "\\b";
    case '\f': return "\\f";
    case '\n': return "\\n";
    case '\r': return "\\r";
    case '\t': return "\\t";
    default: return strprintf("\\u%04x", cp);
  }
}

class RegexParser {
 public:
  RegexParser(std::u32string pattern, GbnfWriter& writer, RegexTarget target)
      : p_(std::move(pattern)), writer_(writer), target_(target) {}

  Result<std::string> parse(RegexAnchoring anchoring) {
    bool anchored_start = anchoring == RegexAnchoring::kFullMatch;
    bool anchored_end = anchored_start;
    size_t end = p_.size();
    if (end > 0 && p_[0] == '^') {
      anchored_start = true;
      pos_ = 1;
    }
    if (end > pos_ && p_[end - 1] == '$' && !escaped_at(end - 1)) {
      anchored_end = true;
      --end;
    }
    end_ = end;
    std::string body = alternation();
    if (!error_.empty()) return Error{error_};
    if (pos_ != end_) return fail_now(p_[pos_] == ')' ? "unbalanced ')'" : "unexpected character");
    if (!anchored_start) body = "(" + any_char_gbnf(writer_, target_) + ")* " + body;
    if (!anchored_end) body += " (" + any_char_gbnf(writer_, target_) + ")*";
    return body;
  }

 private:
  bool escaped_at(size_t i) const {
    size_t n = 0;
    while (i > n && p_[i - 1 - n] == '\\') ++n;
    return n % 2 == 1;
  }
  bool at_end() const { return pos_ >= end_; }
  Error fail_now(const std::string& what) {
    return Error{strprintf("regex: %s at offset %zu", what.c_str(), pos_)};
  }
  void fail(const std::string& what) {
    if (error_.empty()) error_ = fail_now(what).message;
  }

  std::string alternation() {
    std::vector<std::string> alts{sequence()};
    while (!at_end() && error_.empty() && p_[pos_] == '|') {
      ++pos_;
      alts.push_back(sequence());
    }
    if (alts.size() == 1) return alts[0];
    std::string out = "(";
    for (size_t i = 0; i < alts.size(); ++i) out += (i ? " | " : "") + alts[i];
    return out + ")";
  }

  std::string sequence() {
    std::string out;
    while (!at_end() && error_.empty() && p_[pos_] != '|' && p_[pos_] != ')') {
      std::string atom_expr = atom();
      if (!error_.empty()) break;
      atom_expr = quantified(std::move(atom_expr));
      out += (out.empty() ? "" : " ") + atom_expr;
    }
    return out.empty() ? "\"\"" : out;
  }

  std::string quantified(std::string atom_expr) {
    if (at_end()) return atom_expr;
    std::string q;
    const char32_t c = p_[pos_];
    if (c == '*' || c == '+' || c == '?') {
      q = std::string(1, static_cast<char>(c));
      ++pos_;
    } else if (c == '{') {
      const size_t save = pos_;
      auto bounds = repeat_bounds();
      if (!bounds) {
        pos_ = save;  // not a quantifier: Python treats a stray '{' as a literal
        return atom_expr;
      }
      q = *bounds;
    } else {
      return atom_expr;
    }
    if (!at_end() && p_[pos_] == '?') ++pos_;  // lazy: same language
    if (!at_end() && p_[pos_] == '+') fail("possessive quantifiers are not supported");
    if (!at_end() && (p_[pos_] == '*' || p_[pos_] == '+' || p_[pos_] == '{')) fail("a quantifier follows a quantifier");
    return "(" + atom_expr + ")" + q;
  }

  std::optional<std::string> repeat_bounds() {
    ++pos_;  // '{'
    auto number = [&]() -> std::optional<uint32_t> {
      uint64_t v = 0;
      size_t digits = 0;
      while (!at_end() && p_[pos_] >= '0' && p_[pos_] <= '9') {
        v = v * 10 + (p_[pos_] - '0');
        if (v > 1u << 30) v = 1u << 30;
        ++pos_;
        ++digits;
      }
      if (digits == 0) return std::nullopt;
      return static_cast<uint32_t>(v);
    };
    auto lo = number();
    if (!lo) return std::nullopt;
    std::optional<uint32_t> hi = lo;
    bool open = false;
    if (!at_end() && p_[pos_] == ',') {
      ++pos_;
      hi = number();
      open = !hi;
    }
    if (at_end() || p_[pos_] != '}') return std::nullopt;
    ++pos_;
    if ((hi && *hi > kMaxRepeatBound) || *lo > kMaxRepeatBound) {
      fail(strprintf("repetition bounds above %u are not supported", kMaxRepeatBound));
      return "";
    }
    if (hi && *hi < *lo) {
      fail("repetition {m,n} with n < m");
      return "";
    }
    if (open) return strprintf("{%u,}", *lo);
    return *hi == *lo ? strprintf("{%u}", *lo) : strprintf("{%u,%u}", *lo, *hi);
  }

  std::string atom() {
    const char32_t c = p_[pos_];
    switch (c) {
      case '(': return group();
      case '[': return set_expr(char_class());
      case '.':
        ++pos_;
        return set_expr(complement_ranges({{'\n', '\n'}}));
      case '\\': return escape_outside_class();
      case '^': fail("'^' is supported only at the start of the pattern"); return "";
      case '$': fail("'$' is supported only at the end of the pattern"); return "";
      case '*': case '+': case '?': fail("a quantifier with nothing to repeat"); return "";
      default:
        ++pos_;
        return set_expr({{static_cast<uint32_t>(c), static_cast<uint32_t>(c)}});
    }
  }

  std::string group() {
    ++pos_;  // '('
    if (!at_end() && p_[pos_] == '?') {
      if (pos_ + 1 < end_ && p_[pos_ + 1] == ':') {
        pos_ += 2;
      } else {
        const char32_t k = pos_ + 1 < end_ ? p_[pos_ + 1] : 0;
        fail(k == '=' || k == '!' || k == '<' ? "lookaround assertions are not supported"
             : k == 'P'                       ? "named groups are not supported; use (...) or (?:...)"
                                              : "inline flags and other (? constructs are not supported");
        return "";
      }
    }
    std::string inner = alternation();
    if (!error_.empty()) return "";
    if (at_end() || p_[pos_] != ')') {
      fail("missing ')'");
      return "";
    }
    ++pos_;
    return "(" + inner + ")";
  }

  // \d \w \s and their complements, or nullopt for other escapes.
  std::optional<Ranges> class_escape(char32_t e) {
    switch (e) {
      case 'd': return kDigit;
      case 'D': return complement_ranges(kDigit);
      case 'w': return kWord;
      case 'W': return complement_ranges(kWord);
      case 's': return kSpace;
      case 'S': return complement_ranges(kSpace);
      default: return std::nullopt;
    }
  }

  // The code point of a single-character escape after the backslash (pos_ at the escape letter).
  std::optional<uint32_t> char_escape() {
    const char32_t e = p_[pos_++];
    auto hex = [&](int n) -> std::optional<uint32_t> {
      uint32_t v = 0;
      for (int i = 0; i < n; ++i) {
        if (at_end()) return std::nullopt;
        const char32_t h = p_[pos_++];
        const int d = h >= '0' && h <= '9' ? h - '0' : h >= 'a' && h <= 'f' ? h - 'a' + 10
                    : h >= 'A' && h <= 'F' ? h - 'A' + 10 : -1;
        if (d < 0) return std::nullopt;
        v = v * 16 + d;
      }
      return v;
    };
    switch (e) {
      case 'n': return '\n';
      case 't': return '\t';
      case 'r': return '\r';
      case 'f': return '\f';
      case 'v': return '\v';
      case '0': return 0;
      case 'x': {
        auto v = hex(2);
        if (!v) fail("\\x needs two hex digits");
        return v;
      }
      case 'u': {
        auto v = hex(4);
        if (!v || (*v >= 0xD800 && *v <= 0xDFFF)) fail("\\u needs four hex digits of a non-surrogate code point");
        return v;
      }
      default:
        if ((e >= '1' && e <= '9')) {
          fail("backreferences are not supported");
          return std::nullopt;
        }
        if (e == 'b' || e == 'B' || e == 'A' || e == 'Z' || e == 'z' || e == 'G') {
          fail(strprintf("the anchor \\%c is not supported", static_cast<char>(e)));
          return std::nullopt;
        }
        if ((e >= 'a' && e <= 'z') || (e >= 'A' && e <= 'Z')) {
          fail(strprintf("the escape \\%c is not supported", static_cast<char>(e)));
          return std::nullopt;
        }
        return static_cast<uint32_t>(e);  // an escaped punctuation character stands for itself
    }
  }

  std::string escape_outside_class() {
    ++pos_;  // '\'
    if (at_end()) {
      fail("a trailing backslash");
      return "";
    }
    if (auto ranges = class_escape(p_[pos_])) {
      ++pos_;
      return set_expr(*ranges);
    }
    auto cp = char_escape();
    if (!cp) return "";
    return set_expr({{*cp, *cp}});
  }

  Ranges char_class() {
    ++pos_;  // '['
    bool negated = false;
    if (!at_end() && p_[pos_] == '^') {
      negated = true;
      ++pos_;
    }
    Ranges ranges;
    bool first = true;
    while (true) {
      if (at_end()) {
        fail("missing ']'");
        return {};
      }
      char32_t c = p_[pos_];
      if (c == ']' && !first) break;
      first = false;
      uint32_t lo;
      if (c == '\\') {
        ++pos_;
        if (at_end()) {
          fail("a trailing backslash");
          return {};
        }
        if (auto cls = class_escape(p_[pos_])) {
          ++pos_;
          ranges.insert(ranges.end(), cls->begin(), cls->end());
          continue;
        }
        if (p_[pos_] == 'b') {  // inside a class, \b is a backspace
          ++pos_;
          lo = '\b';
        } else {
          auto cp = char_escape();
          if (!cp) return {};
          lo = *cp;
        }
      } else {
        if (c == '[' && pos_ + 1 < end_ && (p_[pos_ + 1] == ':' || p_[pos_ + 1] == '=')) {
          fail("POSIX classes like [:alpha:] are not supported");
          return {};
        }
        lo = c;
        ++pos_;
      }
      uint32_t hi = lo;
      if (pos_ + 1 < end_ && p_[pos_] == '-' && p_[pos_ + 1] != ']') {
        ++pos_;
        char32_t h = p_[pos_];
        if (h == '\\') {
          ++pos_;
          if (at_end()) {
            fail("a trailing backslash");
            return {};
          }
          auto cp = char_escape();
          if (!cp) return {};
          hi = *cp;
        } else {
          hi = h;
          ++pos_;
        }
        if (hi < lo) {
          fail("a reversed range in a character class");
          return {};
        }
      }
      ranges.push_back({lo, hi});
    }
    ++pos_;  // ']'
    ranges = normalize_ranges(std::move(ranges));
    if (negated) ranges = complement_ranges(ranges);
    if (ranges.empty()) fail("an empty character class");
    return ranges;
  }

  std::string set_expr(const Ranges& ranges) {
    if (!error_.empty() || ranges.empty()) return "";
    if (ranges.size() == 1 && ranges[0].lo == ranges[0].hi && target_ == RegexTarget::kRaw) {
      return GbnfWriter::literal(utf8_of(ranges[0].lo));
    }
    return char_set_gbnf(writer_, ranges, target_);
  }

  std::u32string p_;
  GbnfWriter& writer_;
  RegexTarget target_;
  size_t pos_ = 0;
  size_t end_ = 0;
  std::string error_;
};

// UTF-8 -> code points; nullopt on invalid UTF-8.
std::optional<std::u32string> decode_utf8(std::string_view s) {
  std::u32string out;
  for (size_t i = 0; i < s.size();) {
    const auto b = static_cast<uint8_t>(s[i]);
    const size_t n = b < 0x80 ? 1 : (b >> 5) == 6 ? 2 : (b >> 4) == 14 ? 3 : (b >> 3) == 30 ? 4 : 0;
    if (n == 0 || i + n > s.size()) return std::nullopt;
    uint32_t cp = n == 1 ? b : b & (0x7F >> n);
    for (size_t k = 1; k < n; ++k) {
      const auto c = static_cast<uint8_t>(s[i + k]);
      if ((c >> 6) != 2) return std::nullopt;
      cp = (cp << 6) | (c & 0x3F);
    }
    out.push_back(cp);
    i += n;
  }
  return out;
}

}  // namespace

std::string char_set_gbnf(GbnfWriter& writer, const std::vector<CodepointRange>& ranges, RegexTarget target) {
  if (target == RegexTarget::kRaw) return GbnfWriter::char_class(ranges);
  // In a JSON string, `"`, `\` and U+0000-U+001F must be escaped; everything else appears as itself.
  const Ranges specials = {{0x00, 0x1F}, {'"', '"'}, {'\\', '\\'}};
  const Ranges plain = subtract_ranges(ranges, specials);
  std::vector<std::string> alts;
  if (!plain.empty()) alts.push_back(GbnfWriter::char_class(plain));
  for (const auto& r : ranges) {
    for (const auto& s : specials) {
      const uint32_t lo = std::max(r.lo, s.lo), hi = std::min(r.hi, s.hi);
      for (uint32_t cp = lo; cp <= hi && lo <= hi; ++cp) alts.push_back(GbnfWriter::literal(json_escape_of(cp)));
    }
  }
  if (alts.size() == 1) return alts[0];
  std::string body;
  for (size_t i = 0; i < alts.size(); ++i) body += (i ? " | " : "") + alts[i];
  return writer.add_rule("char", body);
}

std::string any_char_gbnf(GbnfWriter& writer, RegexTarget target) {
  return char_set_gbnf(writer, {{0, kMaxCodepoint}}, target);
}

Result<std::string> regex_to_gbnf(std::string_view pattern, GbnfWriter& writer, RegexTarget target,
                                  RegexAnchoring anchoring) {
  auto decoded = decode_utf8(pattern);
  if (!decoded) return Error{"regex: the pattern is not valid UTF-8"};
  return RegexParser(std::move(*decoded), writer, target).parse(anchoring);
}

}  // namespace kairo::grammar
