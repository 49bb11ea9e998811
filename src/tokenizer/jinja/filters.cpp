// Jinja2's builtin filters (jinja2/filters.py) plus Hugging Face's `tojson`, with the same argument names and
// defaults so templates written against Python behave the same.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <unordered_map>

#include "tokenizer/jinja/error.h"
#include "tokenizer/jinja/interp.h"
#include "tokenizer/jinja/py_text.h"

namespace kairo::jinja {
namespace {

Value str_result(Interp& in, std::string s) {
  in.check_string_size(s.size());
  return Value::string(std::move(s));
}

int64_t int_arg(const Value* v, int64_t fallback, const char* what) {
  if (!v || v->is_undefined() || v->is_none()) return fallback;
  if (v->is_int() || v->is_bool()) return v->as_int();
  if (v->is_float()) return static_cast<int64_t>(v->as_double());
  fail(std::string(what) + " must be an integer, not " + type_name(*v));
}

std::string str_arg(const Value* v, const std::string& fallback) {
  return v && !v->is_undefined() ? to_str(*v) : fallback;
}

// Jinja's make_attrgetter: "a.b.0" walks dicts and lists item by item.
Value attr_path(const Value& item, const Value& attribute) {
  if (!attribute.is_string()) return get_item(item, attribute);
  Value cur = item;
  const std::string& path = attribute.str();
  size_t start = 0;
  while (true) {
    size_t dot = path.find('.', start);
    std::string part = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    bool numeric = !part.empty() && std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; });
    cur = get_item(cur, numeric ? Value::integer(std::strtoll(part.c_str(), nullptr, 10)) : Value::string(part));
    if (dot == std::string::npos) return cur;
    start = dot + 1;
  }
}

Value fold_case(const Value& v, bool case_sensitive) {
  return !case_sensitive && v.is_string() ? Value::string(str_lower(v.str())) : v;
}

Value f_abs(Interp&, const Value& v, CallArgs& a) {
  ArgReader(a, "abs", {});
  require_defined(v);
  if (v.is_float()) return Value::number(std::fabs(v.as_double()));
  if (v.is_number()) return unary_op(v.as_int() < 0 ? "-" : "+", v);
  fail("bad operand type for abs(): '" + type_name(v) + "'");
}

Value f_attr(Interp&, const Value& v, CallArgs& a) {
  ArgReader r(a, "attr", {"name"});
  // Python getattr only: dict keys are not attributes.
  std::string name = str_arg(r.get(0), "");
  if (v.is_namespace()) return get_attr(v, name);
  if (v.is_dict() || v.is_list() || v.is_string()) return get_method(v, name);
  require_defined(v);
  return Value::undefined("'" + type_name(v) + " object' has no attribute '" + name + "'");
}

Value f_batch(Interp& in, const Value& v, CallArgs& a) {
  ArgReader r(a, "batch", {"linecount", "fill_with"});
  int64_t n = int_arg(r.get(0), 0, "linecount");
  if (n <= 0) fail("batch() linecount must be positive");
  std::vector<Value> out, cur;
  for (auto& x : iterate(v)) {
    cur.push_back(x);
    if (static_cast<int64_t>(cur.size()) == n) out.push_back(Value::list(std::exchange(cur, {})));
  }
  if (!cur.empty()) {
    if (r.get(1) && !r.get(1)->is_none())
      while (static_cast<int64_t>(cur.size()) < n) cur.push_back(*r.get(1));
    out.push_back(Value::list(std::move(cur)));
  }
  in.check_list_size(out.size());
  return Value::list(std::move(out));
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

Value f_length(Interp&, const Value& v, CallArgs& a) {
  ArgReader(a, "length", {});
  switch (v.kind()) {
    case Value::Kind::Undefined: return Value::integer(0);
    case Value::Kind::String: return Value::integer(static_cast<int64_t>(utf8_length(v.str())));
    case Value::Kind::List: return Value::integer(static_cast<int64_t>(v.items().size()));
    case Value::Kind::Dict: return Value::integer(static_cast<int64_t>(v.dict_obj().entries.size()));
    default: fail("object of type '" + type_name(v) + "' has no len()");
  }
}

Value f_default(Interp&, const Value& v, CallArgs& a) {
  ArgReader r(a, "default", {"default_value", "boolean"});
  Value fallback = r.get_or(0, Value::string(""));
  bool boolean = r.get(1) && truthy(*r.get(1));
  if (v.is_undefined() || (boolean && !truthy(v))) return fallback;
  return v;
}

Value f_dictsort(Interp&, const Value& v, CallArgs& a) {
  ArgReader r(a, "dictsort", {"case_sensitive", "by", "reverse"});
  if (!v.is_dict()) fail("dictsort expects a mapping, got " + type_name(v));
  bool cs = r.get(0) && truthy(*r.get(0));
  std::string by = str_arg(r.get(1), "key");
  if (by != "key" && by != "value") fail("You can only sort by either 'key' or 'value'");
  bool reverse = r.get(2) && truthy(*r.get(2));
  size_t pos = by == "key" ? 0 : 1;
  std::vector<Value> pairs;
  for (const auto& [k, val] : v.dict_obj().entries) pairs.push_back(Value::list({k, val}, true));
  std::stable_sort(pairs.begin(), pairs.end(), [&](const Value& x, const Value& y) {
    Value kx = fold_case(x.items()[pos], cs), ky = fold_case(y.items()[pos], cs);
    return reverse ? less_than(ky, kx) : less_than(kx, ky);
  });
  return Value::list(std::move(pairs));
}

Value f_escape(Interp& in, const Value& v, CallArgs& a) {
  ArgReader(a, "escape", {});
  std::string out;
  for (char c : to_str(v)) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&#34;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return str_result(in, std::move(out));
}

Value f_first(Interp&, const Value& v, CallArgs& a) {
  ArgReader(a, "first", {});
  std::vector<Value> items = iterate(v);
  return items.empty() ? Value::undefined("No first item, sequence was empty.") : items.front();
}

Value f_last(Interp&, const Value& v, CallArgs& a) {
  ArgReader(a, "last", {});
  std::vector<Value> items = iterate(v);
  return items.empty() ? Value::undefined("No last item, sequence was empty.") : items.back();
}

// Python float(str): surrounding whitespace, underscores between digits, inf/nan.
bool parse_py_float(const std::string& text, double& out) {
  std::string s = str_strip(text, nullptr, true, true), clean;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '_') {
      if (i == 0 || i + 1 == s.size() || !std::isdigit(static_cast<unsigned char>(s[i - 1])) ||
          !std::isdigit(static_cast<unsigned char>(s[i + 1])))
        return false;
      continue;
    }
    clean += s[i];
  }
  if (clean.empty()) return false;
  std::string lower = str_lower(clean);
  std::string body = (lower[0] == '+' || lower[0] == '-') ? lower.substr(1) : lower;
  if (body == "inf" || body == "infinity" || body == "nan") {
    out = body == "nan" ? NAN : INFINITY;
    if (lower[0] == '-') out = -out;
    return true;
  }
  if (body.find_first_not_of("0123456789.e+-") != std::string::npos) return false;
  char* end = nullptr;
  out = std::strtod(clean.c_str(), &end);
  return end && *end == '\0';
}

Value f_float(Interp&, const Value& v, CallArgs& a) {
  ArgReader r(a, "float", {"default"});
  Value fallback = r.get_or(0, Value::number(0.0));
  if (v.is_number()) return Value::number(v.as_double());
  double d;
  if (v.is_string() && parse_py_float(v.str(), d)) return Value::number(d);
  return fallback;
}

Value f_int(Interp&, const Value& v, CallArgs& a) {
  ArgReader r(a, "int", {"default", "base"});
  Value fallback = r.get_or(0, Value::integer(0));
  int64_t base = int_arg(r.get(1), 10, "base");
  if (v.is_int() || v.is_bool()) return Value::integer(v.as_int());
  if (v.is_float()) {
    double d = v.as_double();
    if (!std::isfinite(d) || std::fabs(d) >= 9.2e18) return fallback;
    return Value::integer(static_cast<int64_t>(d));
  }
  if (!v.is_string()) return fallback;
  std::string s = str_strip(v.str(), nullptr, true, true), clean;
  for (char c : s)
    if (c != '_') clean += c;
  if (!clean.empty() && base >= 2 && base <= 36) {
    errno = 0;
    char* end = nullptr;
    long long x = std::strtoll(clean.c_str(), &end, static_cast<int>(base));
    if (end && *end == '\0' && errno == 0) return Value::integer(x);
  }
  if (base == 0 && !clean.empty()) {
    char* end = nullptr;
    long long x = std::strtoll(clean.c_str(), &end, 0);
    if (end && *end == '\0') return Value::integer(x);
  }
  double d;
  if (parse_py_float(v.str(), d) && std::isfinite(d) && std::fabs(d) < 9.2e18) return Value::integer(static_cast<int64_t>(d));
  return fallback;
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
    for (size_t i = 1; i < lines.size(); ++i) rv += "\n" + (lines[i].empty() ? "" : indention + lines[i]);
  }
  if (first) rv = indention + rv;
  return Value::string(std::move(rv));
}

Value f_items(Interp&, const Value& v, CallArgs& a) {
  ArgReader(a, "items", {});
  if (v.is_undefined()) return Value::list({});
  if (!v.is_dict()) fail("Can only get item pairs from a mapping.");
  std::vector<Value> pairs;
  for (const auto& [k, val] : v.dict_obj().entries) pairs.push_back(Value::list({k, val}, true));
  return Value::list(std::move(pairs));
}

Value f_join(Interp& in, const Value& v, CallArgs& a) {
  ArgReader r(a, "join", {"d", "attribute"});
  std::string sep = str_arg(r.get(0), "");
  std::string out;
  bool first = true;
  for (const auto& item : iterate(v)) {
    if (!first) out += sep;
    first = false;
    out += to_str(r.get(1) && !r.get(1)->is_none() ? attr_path(item, *r.get(1)) : item);
    in.check_string_size(out.size());
  }
  return Value::string(std::move(out));
}

Value f_list(Interp&, const Value& v, CallArgs& a) {
  ArgReader(a, "list", {});
  return Value::list(iterate(v));
}

Value f_lower(Interp& in, const Value& v, CallArgs& a) {
  ArgReader(a, "lower", {});
  return str_result(in, str_lower(to_str(v)));
}

Value f_upper(Interp& in, const Value& v, CallArgs& a) {
  ArgReader(a, "upper", {});
  return str_result(in, str_upper(to_str(v)));
}

// map(filter_name, *args) or map(attribute=..., default=...).
Value f_map(Interp& in, const Value& v, CallArgs& a) {
  std::vector<Value> out;
  const Value* attribute = nullptr;
  const Value* fallback = nullptr;
  for (const auto& [k, val] : a.keyword) {
    if (k == "attribute") attribute = &val;
    else if (k == "default") fallback = &val;
  }
  if (attribute) {
    for (const auto& item : iterate(v)) {
      Value x = attr_path(item, *attribute);
      out.push_back(x.is_undefined() && fallback ? *fallback : x);
    }
    return Value::list(std::move(out));
  }
  if (a.positional.empty() || !a.positional[0].is_string()) fail("map() needs a filter name or attribute=");
  std::string name = a.positional[0].str();
  CallArgs rest;
  rest.positional.assign(a.positional.begin() + 1, a.positional.end());
  rest.keyword = a.keyword;
  for (const auto& item : iterate(v)) {
    CallArgs each = rest;
    out.push_back(in.apply_filter(name, item, each));
  }
  return Value::list(std::move(out));
}

Value min_max(const Value& v, CallArgs& a, bool want_max) {
  ArgReader r(a, want_max ? "max" : "min", {"case_sensitive", "attribute"});
  bool cs = r.get(0) && truthy(*r.get(0));
  std::vector<Value> items = iterate(v);
  if (items.empty()) return Value::undefined(std::string("No aggregated item, sequence was empty."));
  auto key = [&](const Value& x) { return fold_case(r.get(1) ? attr_path(x, *r.get(1)) : x, cs); };
  size_t best = 0;
  for (size_t i = 1; i < items.size(); ++i) {
    bool better = want_max ? less_than(key(items[best]), key(items[i])) : less_than(key(items[i]), key(items[best]));
    if (better) best = i;
  }
  return items[best];
}
Value f_max(Interp&, const Value& v, CallArgs& a) { return min_max(v, a, true); }
Value f_min(Interp&, const Value& v, CallArgs& a) { return min_max(v, a, false); }

// select / reject / selectattr / rejectattr.
Value select_impl(Interp& in, const Value& v, CallArgs& a, bool by_attr, bool keep_if) {
  size_t idx = 0;
  Value attribute;
  if (by_attr) {
    if (a.positional.empty()) fail("selectattr/rejectattr need an attribute name");
    attribute = a.positional[idx++];
  }
  std::string test;
  if (idx < a.positional.size()) {
    if (!a.positional[idx].is_string()) fail("the test name must be a string");
    test = a.positional[idx++].str();
  }
  CallArgs rest;
  rest.positional.assign(a.positional.begin() + idx, a.positional.end());
  rest.keyword = a.keyword;
  std::vector<Value> out;
  for (const auto& item : iterate(v)) {
    Value subject = by_attr ? attr_path(item, attribute) : item;
    bool ok;
    if (test.empty()) {
      ok = truthy(subject);
    } else {
      CallArgs each = rest;
      ok = in.apply_test(test, subject, each);
    }
    if (ok == keep_if) out.push_back(item);
  }
  return Value::list(std::move(out));
}
Value f_select(Interp& in, const Value& v, CallArgs& a) { return select_impl(in, v, a, false, true); }
Value f_reject(Interp& in, const Value& v, CallArgs& a) { return select_impl(in, v, a, false, false); }
Value f_selectattr(Interp& in, const Value& v, CallArgs& a) { return select_impl(in, v, a, true, true); }
Value f_rejectattr(Interp& in, const Value& v, CallArgs& a) { return select_impl(in, v, a, true, false); }

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

Value f_reverse(Interp&, const Value& v, CallArgs& a) {
  ArgReader(a, "reverse", {});
  if (v.is_string()) {
    std::vector<uint32_t> cps = utf8_decode(v.str());
    std::reverse(cps.begin(), cps.end());
    return Value::string(utf8_encode(cps));
  }
  std::vector<Value> items = iterate(v);
  std::reverse(items.begin(), items.end());
  return Value::list(std::move(items));
}

Value f_round(Interp&, const Value& v, CallArgs& a) {
  ArgReader r(a, "round", {"precision", "method"});
  int64_t precision = int_arg(r.get(0), 0, "precision");
  std::string method = str_arg(r.get(1), "common");
  if (method != "common" && method != "ceil" && method != "floor")
    fail("method must be common, ceil or floor");
  require_defined(v);
  if (!v.is_number()) fail("type " + type_name(v) + " doesn't define __round__ method");
  if (method == "common") {
    if (!v.is_float()) return Value::integer(v.as_int());
    double x = v.as_double();
    if (!std::isfinite(x) || precision > 300) return v;
    if (precision < 0) {
      double p = std::pow(10.0, static_cast<double>(-precision));
      return Value::number(std::nearbyint(x / p) * p);
    }
    // printf rounds the exact binary value half-to-even, as Python's round() does.
    char buf[400];
    std::snprintf(buf, sizeof(buf), "%.*f", static_cast<int>(precision), x);
    return Value::number(std::strtod(buf, nullptr));
  }
  double p = std::pow(10.0, static_cast<double>(precision));
  double x = v.as_double() * p;
  return Value::number((method == "ceil" ? std::ceil(x) : std::floor(x)) / p);
}

Value f_safe(Interp&, const Value& v, CallArgs& a) {
  ArgReader(a, "safe", {});
  return Value::string(to_str(v));
}

Value f_sort(Interp&, const Value& v, CallArgs& a) {
  ArgReader r(a, "sort", {"reverse", "case_sensitive", "attribute"});
  bool reverse = r.get(0) && truthy(*r.get(0));
  bool cs = r.get(1) && truthy(*r.get(1));
  const Value* attribute = r.get(2) && !r.get(2)->is_none() ? r.get(2) : nullptr;
  std::vector<Value> items = iterate(v);
  auto key = [&](const Value& x) { return fold_case(attribute ? attr_path(x, *attribute) : x, cs); };
  std::stable_sort(items.begin(), items.end(), [&](const Value& x, const Value& y) {
    return reverse ? less_than(key(y), key(x)) : less_than(key(x), key(y));
  });
  return Value::list(std::move(items));
}

Value f_string(Interp&, const Value& v, CallArgs& a) {
  ArgReader(a, "string", {});
  return v.is_string() ? v : Value::string(to_str(v));
}

Value f_sum(Interp& in, const Value& v, CallArgs& a) {
  ArgReader r(a, "sum", {"attribute", "start"});
  Value total = r.get_or(1, Value::integer(0));
  for (const auto& item : iterate(v))
    total = binary_op(in, "+", total, r.get(0) && !r.get(0)->is_none() ? attr_path(item, *r.get(0)) : item);
  return total;
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
    opt.item_separator = ",";
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
  if (static_cast<int64_t>(s.size()) <= length + leeway) return Value::string(utf8_encode(s));
  std::string head = utf8_encode(s, 0, static_cast<size_t>(length - end_len));
  if (!killwords) {
    size_t sp = head.rfind(' ');
    if (sp != std::string::npos) head = head.substr(0, sp);
  }
  return str_result(in, head + end);
}

Value f_unique(Interp&, const Value& v, CallArgs& a) {
  ArgReader r(a, "unique", {"case_sensitive", "attribute"});
  bool cs = r.get(0) && truthy(*r.get(0));
  std::vector<Value> out, seen;
  for (const auto& item : iterate(v)) {
    Value k = fold_case(r.get(1) ? attr_path(item, *r.get(1)) : item, cs);
    bool dup = false;
    for (const auto& s : seen) dup = dup || equals(s, k);
    if (dup) continue;
    seen.push_back(k);
    out.push_back(item);
  }
  return Value::list(std::move(out));
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
  return str_result(in, percent_format(in, to_str(v), args));
}

const std::unordered_map<std::string, FilterFn>& filter_table() {
  static const std::unordered_map<std::string, FilterFn> table = {
      {"abs", f_abs},         {"attr", f_attr},           {"batch", f_batch},       {"capitalize", f_capitalize},
      {"center", f_center},   {"count", f_length},        {"d", f_default},         {"default", f_default},
      {"dictsort", f_dictsort}, {"e", f_escape},          {"escape", f_escape},     {"forceescape", f_escape},
      {"first", f_first},     {"float", f_float},         {"format", f_format},     {"indent", f_indent},
      {"int", f_int},         {"items", f_items},         {"join", f_join},         {"last", f_last},
      {"length", f_length},   {"list", f_list},           {"lower", f_lower},       {"map", f_map},
      {"max", f_max},         {"min", f_min},             {"reject", f_reject},     {"rejectattr", f_rejectattr},
      {"replace", f_replace}, {"reverse", f_reverse},     {"round", f_round},       {"safe", f_safe},
      {"select", f_select},   {"selectattr", f_selectattr}, {"sort", f_sort},       {"string", f_string},
      {"sum", f_sum},         {"title", f_title},         {"tojson", f_tojson},     {"trim", f_trim},
      {"truncate", f_truncate}, {"unique", f_unique},     {"upper", f_upper},       {"wordcount", f_wordcount},
  };
  return table;
}

}  // namespace

FilterFn find_filter(const std::string& name) {
  const auto& t = filter_table();
  auto it = t.find(name);
  return it == t.end() ? nullptr : it->second;
}

}  // namespace kairo::jinja
