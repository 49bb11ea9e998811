// Filters that produce or transform text: case, padding, escaping, indent, replace, truncate, printf-style
// format and Hugging Face's `tojson`. Lengths and positions count code points, as Python's str does.
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tokenizer/jinja/error.h"
#include "tokenizer/jinja/filters_shared.h"
#include "tokenizer/jinja/interp.h"
#include "tokenizer/jinja/markup.h"
#include "tokenizer/jinja/py_text.h"

namespace kairo::jinja {
namespace {

using detail::int_arg;
using detail::str_arg;

Value str_result(Interp& in, std::string s) {
  in.check_string_size(s.size());
  return Value::string(std::move(s));
}

Value f_capitalize(Interp& in, const Value& v, CallArgs& a) {
  ArgReader(a, "capitalize", {});
  std::vector<uint32_t> cps = utf8_decode(to_str(v));
  for (size_t i = 0; i < cps.size(); ++i) cps[i] = i == 0 ? py_upper(cps[i]) : py_lower(cps[i]);
  return str_result(in, utf8_encode(cps));
}

Value f_center(Interp& in, const Value& v, CallArgs& a) {
  ArgReader r(a, "center", {"width"});
  std::string s = to_str(v);
  int64_t width = int_arg(r.get(0), 80, "width");
  int64_t len = static_cast<int64_t>(utf8_length(s));
  if (width <= len) return Value::string(s);
  in.check_string_size(static_cast<size_t>(width - len) + s.size());
  int64_t marg = width - len;
  int64_t left = marg / 2 + (marg & width & 1);  // CPython's str.center split
  return Value::string(std::string(left, ' ') + s + std::string(marg - left, ' '));
}

Value f_escape(Interp& in, const Value& v, CallArgs& a) {
  ArgReader(a, "escape", {});
  Value out = escape_markup(v);
  in.check_string_size(out.str().size());
  return out;
}

// Escapes Markup too (its str() is escaped again).
Value f_forceescape(Interp& in, const Value& v, CallArgs& a) {
  ArgReader(a, "forceescape", {});
  std::string out = html_escape(to_str(v));
  in.check_string_size(out.size());
  return Value::markup(std::move(out));
}

std::vector<std::string> py_splitlines(const std::string& s) {
  std::vector<std::string> lines;
  std::vector<uint32_t> cps = utf8_decode(s);
  size_t start = 0;
  for (size_t i = 0; i < cps.size(); ++i) {
    uint32_t c = cps[i];
    bool brk = c == '\n' || c == '\r' || c == 0x0B || c == 0x0C || (c >= 0x1C && c <= 0x1E) || c == 0x85 ||
               c == 0x2028 || c == 0x2029;
    if (!brk) continue;
    lines.push_back(utf8_encode(cps, start, i));
    if (c == '\r' && i + 1 < cps.size() && cps[i + 1] == '\n') ++i;
    start = i + 1;
  }
  if (start < cps.size()) lines.push_back(utf8_encode(cps, start, cps.size()));
  return lines;
}

Value f_indent(Interp& in, const Value& v, CallArgs& a) {
  ArgReader r(a, "indent", {"width", "first", "blank"});
  std::string indention;
  if (r.get(0) && r.get(0)->is_string()) indention = r.get(0)->str();
  else indention = std::string(std::max<int64_t>(0, std::min<int64_t>(int_arg(r.get(0), 4, "width"), 1 << 16)), ' ');
  bool first = r.get(1) && truthy(*r.get(1));
  bool blank = r.get(2) && truthy(*r.get(2));
  std::vector<std::string> lines = py_splitlines(to_str(v) + "\n");
  size_t total = 0;
  for (const auto& l : lines) total += l.size() + indention.size() + 1;
  in.check_string_size(total);
  std::string rv;
  if (blank) {
    for (size_t i = 0; i < lines.size(); ++i) rv += (i ? "\n" + indention : "") + lines[i];
  } else if (!lines.empty()) {
    rv = lines[0];
    // Appended piece by piece, not as "\n" + (...): the same text, but GCC 12 reports a false -Wrestrict there.
    for (size_t i = 1; i < lines.size(); ++i) {
      rv += '\n';
      if (!lines[i].empty()) rv += indention + lines[i];
    }
  }
  if (first) rv = indention + rv;
  return Value::string(std::move(rv));
}

Value f_lower(Interp& in, const Value& v, CallArgs& a) {
  ArgReader(a, "lower", {});
  return str_result(in, str_lower(to_str(v)));
}

Value f_upper(Interp& in, const Value& v, CallArgs& a) {
  ArgReader(a, "upper", {});
  return str_result(in, str_upper(to_str(v)));
}

std::string replace_all(Interp& in, const std::string& s, const std::string& from, const std::string& to,
                        int64_t count) {
  if (count < 0) count = INT64_MAX;
  std::string out;
  if (from.empty()) {  // Python inserts `to` around every character
    std::vector<uint32_t> cps = utf8_decode(s);
    int64_t done = 0;
    for (size_t i = 0; i <= cps.size(); ++i) {
      if (done < count) {
        out += to;
        ++done;
      }
      if (i < cps.size()) utf8_append(out, cps[i]);
      in.check_string_size(out.size());
    }
    return out;
  }
  size_t pos = 0;
  int64_t done = 0;
  while (done < count) {
    size_t hit = s.find(from, pos);
    if (hit == std::string::npos) break;
    out.append(s, pos, hit - pos);
    out += to;
    pos = hit + from.size();
    ++done;
    in.check_string_size(out.size());
  }
  out.append(s, pos, std::string::npos);
  in.check_string_size(out.size());
  return out;
}

Value f_replace(Interp& in, const Value& v, CallArgs& a) {
  ArgReader r(a, "replace", {"old", "new", "count"});
  if (!r.get(0) || !r.get(1)) fail("replace() needs the old and the new text");
  return Value::string(replace_all(in, to_str(v), to_str(*r.get(0)), to_str(*r.get(1)), int_arg(r.get(2), -1, "count")));
}

Value f_title(Interp& in, const Value& v, CallArgs& a) {
  ArgReader(a, "title", {});
  // Jinja splits on runs of [-\s({[<] and capitalizes each piece.
  std::vector<uint32_t> cps = utf8_decode(to_str(v));
  bool word_start = true;
  for (auto& c : cps) {
    bool sep = c == '-' || c == '(' || c == '{' || c == '[' || c == '<' || py_isspace(c);
    if (sep) {
      word_start = true;
      continue;
    }
    c = word_start ? py_upper(c) : py_lower(c);
    word_start = false;
  }
  return str_result(in, utf8_encode(cps));
}

// Hugging Face's tojson: json.dumps(x, ensure_ascii=False, indent=indent, separators=separators, sort_keys=...).
Value f_tojson(Interp& in, const Value& v, CallArgs& a) {
  ArgReader r(a, "tojson", {"ensure_ascii", "indent", "separators", "sort_keys"});
  JsonDumpOptions opt;
  opt.ensure_ascii = r.get(0) && truthy(*r.get(0));
  if (const Value* ind = r.get(1); ind && !ind->is_none() && !ind->is_undefined()) {
    opt.has_indent = true;
    opt.indent = ind->is_string() ? ind->str() : std::string(std::max<int64_t>(0, std::min<int64_t>(int_arg(ind, 0, "indent"), 1 << 10)), ' ');
    opt.item_separator = std::string(1, ',');  // (not = ",": GCC 12 -Wrestrict false positive)
  }
  if (const Value* sep = r.get(2); sep && !sep->is_none() && !sep->is_undefined()) {
    if (!sep->is_list() || sep->items().size() != 2 || !sep->items()[0].is_string() || !sep->items()[1].is_string())
      fail("tojson separators must be a pair of strings, like (',', ': ')");
    opt.item_separator = sep->items()[0].str();
    opt.key_separator = sep->items()[1].str();
  }
  opt.sort_keys = r.get(3) && truthy(*r.get(3));
  return str_result(in, py_json_dumps(v, opt));
}

Value f_trim(Interp& in, const Value& v, CallArgs& a) {
  ArgReader r(a, "trim", {"chars"});
  std::string chars = r.get(0) && !r.get(0)->is_none() ? to_str(*r.get(0)) : std::string();
  return str_result(in, str_strip(to_str(v), r.get(0) && !r.get(0)->is_none() ? &chars : nullptr, true, true));
}

Value f_truncate(Interp& in, const Value& v, CallArgs& a) {
  ArgReader r(a, "truncate", {"length", "killwords", "end", "leeway"});
  std::vector<uint32_t> s = utf8_decode(to_str(v));
  int64_t length = int_arg(r.get(0), 255, "length");
  bool killwords = r.get(1) && truthy(*r.get(1));
  std::string end = str_arg(r.get(2), "...");
  int64_t leeway = int_arg(r.get(3), 5, "leeway");
  int64_t end_len = static_cast<int64_t>(utf8_length(end));
  if (length < end_len) fail("expected length >= " + std::to_string(end_len) + ", got " + std::to_string(length));
  if (leeway < 0) fail("expected leeway >= 0, got " + std::to_string(leeway));
  // Written without length + leeway, which overflows for a huge length.
  const auto n = static_cast<int64_t>(s.size());
  if (n <= length || n - length <= leeway) return Value::string(utf8_encode(s));
  std::string head = utf8_encode(s, 0, static_cast<size_t>(length - end_len));
  if (!killwords) {
    size_t sp = head.rfind(' ');
    if (sp != std::string::npos) head = head.substr(0, sp);
  }
  return str_result(in, head + end);
}

Value f_wordcount(Interp&, const Value& v, CallArgs& a) {
  ArgReader(a, "wordcount", {});
  int64_t n = 0;
  bool in_word = false;
  for (uint32_t c : utf8_decode(to_str(v))) {
    bool word = (c < 0x80) ? (std::isalnum(static_cast<int>(c)) || c == '_') : !py_isspace(c);
    if (word && !in_word) ++n;
    in_word = word;
  }
  return Value::integer(n);
}

Value f_format(Interp& in, const Value& v, CallArgs& a) {
  Value args;
  if (!a.keyword.empty()) {
    auto d = std::make_shared<DictObj>();
    for (auto& [k, val] : a.keyword) d->set(Value::string(k), val);
    args = Value::dict(std::move(d));
  } else {
    args = Value::list(a.positional, true);
  }
  // soft_str(value) % args: a Markup format escapes its arguments.
  std::string out = percent_format(in, to_str(v), args, v.is_markup());
  in.check_string_size(out.size());
  return v.is_markup() ? Value::markup(std::move(out)) : Value::string(std::move(out));
}

}  // namespace

void detail::add_text_filters(FilterTable& table) {
  table.insert({
      {"capitalize", f_capitalize}, {"center", f_center}, {"e", f_escape},         {"escape", f_escape},
      {"forceescape", f_forceescape},    {"format", f_format}, {"indent", f_indent},    {"lower", f_lower},
      {"replace", f_replace},       {"title", f_title},   {"tojson", f_tojson},    {"trim", f_trim},
      {"truncate", f_truncate},     {"upper", f_upper},   {"wordcount", f_wordcount},
  });
}

}  // namespace kairo::jinja
