// Python methods templates call on values: str.strip/split/startswith/..., dict.get/items/keys/values,
// list.index/count. Methods that mutate are refused, as in Jinja's ImmutableSandboxedEnvironment.
#include <algorithm>
#include <set>

#include "tokenizer/jinja/error.h"
#include "tokenizer/jinja/interp.h"
#include "tokenizer/jinja/py_text.h"

namespace kairo::jinja {
namespace {

using Method = Value (*)(Interp&, const Value& self, CallArgs&);

Value bind(const Value& self, const std::string& name, Method m) {
  return Value::callable(name, [self, m](Interp& in, CallArgs& a) { return m(in, self, a); });
}

std::string need_str(const Value* v, const char* what) {
  if (!v || !v->is_string()) fail(std::string(what) + " must be str, not " + (v ? type_name(*v) : "nothing"));
  return v->str();
}

int64_t opt_int(const Value* v, int64_t fallback) {
  if (!v || v->is_none()) return fallback;
  if (!v->is_int() && !v->is_bool()) fail("'" + type_name(*v) + "' object cannot be interpreted as an integer");
  return v->as_int();
}

Value strip_impl(const Value& self, CallArgs& a, const char* name, bool l, bool r) {
  ArgReader args(a, name, {"chars"});
  const Value* c = args.get(0);
  if (c && !c->is_none()) {
    std::string chars = need_str(c, "strip arg");
    return Value::string(str_strip(self.str(), &chars, l, r));
  }
  return Value::string(str_strip(self.str(), nullptr, l, r));
}
Value m_strip(Interp&, const Value& s, CallArgs& a) { return strip_impl(s, a, "strip", true, true); }
Value m_lstrip(Interp&, const Value& s, CallArgs& a) { return strip_impl(s, a, "lstrip", true, false); }
Value m_rstrip(Interp&, const Value& s, CallArgs& a) { return strip_impl(s, a, "rstrip", false, true); }

std::vector<Value> split_ws(const std::string& s, int64_t maxsplit) {
  std::vector<uint32_t> cps = utf8_decode(s);
  std::vector<Value> out;
  size_t i = 0, n = cps.size();
  while (true) {
    while (i < n && py_isspace(cps[i])) ++i;
    if (i >= n) break;
    if (maxsplit >= 0 && static_cast<int64_t>(out.size()) >= maxsplit) {
      size_t e = n;
      while (e > i && py_isspace(cps[e - 1])) --e;
      out.push_back(Value::string(utf8_encode(cps, i, e)));
      break;
    }
    size_t b = i;
    while (i < n && !py_isspace(cps[i])) ++i;
    out.push_back(Value::string(utf8_encode(cps, b, i)));
  }
  return out;
}

Value m_split(Interp& in, const Value& s, CallArgs& a) {
  ArgReader args(a, "split", {"sep", "maxsplit"});
  int64_t maxsplit = opt_int(args.get(1), -1);
  std::vector<Value> out;
  if (!args.get(0) || args.get(0)->is_none()) {
    out = split_ws(s.str(), maxsplit);
  } else {
    std::string sep = need_str(args.get(0), "separator");
    if (sep.empty()) fail("empty separator");
    size_t pos = 0;
    while (true) {
      size_t hit = s.str().find(sep, pos);
      if (hit == std::string::npos || (maxsplit >= 0 && static_cast<int64_t>(out.size()) >= maxsplit)) break;
      out.push_back(Value::string(s.str().substr(pos, hit - pos)));
      pos = hit + sep.size();
    }
    out.push_back(Value::string(s.str().substr(pos)));
  }
  in.check_list_size(out.size());
  return Value::list(std::move(out));
}

Value m_rsplit(Interp& in, const Value& s, CallArgs& a) {
  ArgReader args(a, "rsplit", {"sep", "maxsplit"});
  int64_t maxsplit = opt_int(args.get(1), -1);
  if (!args.get(0) || args.get(0)->is_none() || maxsplit < 0) {
    if (maxsplit < 0) return m_split(in, s, a);
    fail("rsplit() without a separator and with maxsplit is not supported");
  }
  std::string sep = need_str(args.get(0), "separator");
  if (sep.empty()) fail("empty separator");
  std::vector<Value> out;
  size_t end = s.str().size();
  while (static_cast<int64_t>(out.size()) < maxsplit) {
    if (end < sep.size()) break;
    size_t hit = s.str().rfind(sep, end - sep.size());
    if (hit == std::string::npos) break;
    out.push_back(Value::string(s.str().substr(hit + sep.size(), end - hit - sep.size())));
    end = hit;
  }
  out.push_back(Value::string(s.str().substr(0, end)));
  std::reverse(out.begin(), out.end());
  return Value::list(std::move(out));
}

Value m_splitlines(Interp&, const Value& s, CallArgs& a) {
  ArgReader(a, "splitlines", {});
  std::vector<Value> out;
  size_t start = 0;
  const std::string& t = s.str();
  for (size_t i = 0; i < t.size(); ++i) {
    if (t[i] != '\n' && t[i] != '\r') continue;
    out.push_back(Value::string(t.substr(start, i - start)));
    if (t[i] == '\r' && i + 1 < t.size() && t[i + 1] == '\n') ++i;
    start = i + 1;
  }
  if (start < t.size()) out.push_back(Value::string(t.substr(start)));
  return Value::list(std::move(out));
}

bool affix_match(const Value& self, CallArgs& a, const char* name, bool prefix) {
  ArgReader args(a, name, {"prefix"});
  if (!args.get(0)) fail(std::string(name) + "() takes at least 1 argument");
  std::vector<Value> options = args.get(0)->is_list() ? args.get(0)->items() : std::vector<Value>{*args.get(0)};
  const std::string& s = self.str();
  for (const auto& o : options) {
    std::string x = need_str(&o, name);
    if (x.size() > s.size()) continue;
    if (prefix ? s.compare(0, x.size(), x) == 0 : s.compare(s.size() - x.size(), x.size(), x) == 0) return true;
  }
  return false;
}
Value m_startswith(Interp&, const Value& s, CallArgs& a) { return Value::boolean(affix_match(s, a, "startswith", true)); }
Value m_endswith(Interp&, const Value& s, CallArgs& a) { return Value::boolean(affix_match(s, a, "endswith", false)); }

Value m_replace(Interp& in, const Value& s, CallArgs& a) {
  ArgReader args(a, "replace", {"old", "new", "count"});
  CallArgs fa;
  fa.positional = {Value::string(need_str(args.get(0), "replace old")), Value::string(need_str(args.get(1), "replace new")),
                   Value::integer(opt_int(args.get(2), -1))};
  return in.apply_filter("replace", s, fa);
}

Value m_upper(Interp&, const Value& s, CallArgs& a) {
  ArgReader(a, "upper", {});
  return Value::string(str_upper(s.str()));
}
Value m_lower(Interp&, const Value& s, CallArgs& a) {
  ArgReader(a, "lower", {});
  return Value::string(str_lower(s.str()));
}
Value m_title(Interp&, const Value& s, CallArgs& a) {
  ArgReader(a, "title", {});
  std::vector<uint32_t> cps = utf8_decode(s.str());
  bool prev_cased = false;
  for (auto& c : cps) {
    if (py_isalpha_cased(c)) {
      c = prev_cased ? py_lower(c) : py_upper(c);
      prev_cased = true;
    } else {
      prev_cased = false;
    }
  }
  return Value::string(utf8_encode(cps));
}
Value m_capitalize(Interp& in, const Value& s, CallArgs& a) { return in.apply_filter("capitalize", s, a); }

// Code-point index of the byte offset (Python indexes str by code point).
int64_t cp_index(const std::string& s, size_t byte_pos) {
  return static_cast<int64_t>(utf8_length(s.substr(0, byte_pos)));
}
Value m_find(Interp&, const Value& s, CallArgs& a) {
  ArgReader args(a, "find", {"sub"});
  size_t hit = s.str().find(need_str(args.get(0), "find arg"));
  return Value::integer(hit == std::string::npos ? -1 : cp_index(s.str(), hit));
}
Value m_rfind(Interp&, const Value& s, CallArgs& a) {
  ArgReader args(a, "rfind", {"sub"});
  size_t hit = s.str().rfind(need_str(args.get(0), "rfind arg"));
  return Value::integer(hit == std::string::npos ? -1 : cp_index(s.str(), hit));
}
Value m_count(Interp&, const Value& s, CallArgs& a) {
  ArgReader args(a, "count", {"sub"});
  std::string sub = need_str(args.get(0), "count arg");
  if (sub.empty()) return Value::integer(static_cast<int64_t>(utf8_length(s.str())) + 1);
  int64_t n = 0;
  for (size_t pos = s.str().find(sub); pos != std::string::npos; pos = s.str().find(sub, pos + sub.size())) ++n;
  return Value::integer(n);
}
Value m_join(Interp& in, const Value& s, CallArgs& a) {
  ArgReader args(a, "join", {"iterable"});
  if (!args.get(0)) fail("join() takes exactly one argument");
  std::string out;
  size_t i = 0;
  for (const auto& item : iterate(*args.get(0))) {
    if (!item.is_string())
      fail("sequence item " + std::to_string(i) + ": expected str instance, " + type_name(item) + " found");
    if (i++) out += s.str();
    out += item.str();
    in.check_string_size(out.size());
  }
  return Value::string(std::move(out));
}

bool all_cps(const std::string& s, bool (*pred)(uint32_t)) {
  std::vector<uint32_t> cps = utf8_decode(s);
  if (cps.empty()) return false;
  return std::all_of(cps.begin(), cps.end(), pred);
}
Value m_isspace(Interp&, const Value& s, CallArgs& a) {
  ArgReader(a, "isspace", {});
  return Value::boolean(all_cps(s.str(), py_isspace));
}
Value m_isdigit(Interp&, const Value& s, CallArgs& a) {
  ArgReader(a, "isdigit", {});
  return Value::boolean(all_cps(s.str(), [](uint32_t c) { return c >= '0' && c <= '9'; }));
}
Value m_isalpha(Interp&, const Value& s, CallArgs& a) {
  ArgReader(a, "isalpha", {});
  return Value::boolean(all_cps(s.str(), [](uint32_t c) { return py_isalpha_cased(c) || (c >= 0x80 && !py_isspace(c)); }));
}
Value m_isalnum(Interp&, const Value& s, CallArgs& a) {
  ArgReader(a, "isalnum", {});
  return Value::boolean(all_cps(s.str(), [](uint32_t c) {
    return (c >= '0' && c <= '9') || py_isalpha_cased(c) || (c >= 0x80 && !py_isspace(c));
  }));
}
Value m_isupper(Interp& in, const Value& s, CallArgs& a) { return Value::boolean(in.apply_test("upper", s, a)); }
Value m_islower(Interp& in, const Value& s, CallArgs& a) { return Value::boolean(in.apply_test("lower", s, a)); }
Value m_removeprefix(Interp&, const Value& s, CallArgs& a) {
  ArgReader args(a, "removeprefix", {"prefix"});
  std::string p = need_str(args.get(0), "prefix");
  return Value::string(s.str().compare(0, p.size(), p) == 0 ? s.str().substr(p.size()) : s.str());
}
Value m_removesuffix(Interp&, const Value& s, CallArgs& a) {
  ArgReader args(a, "removesuffix", {"suffix"});
  std::string p = need_str(args.get(0), "suffix");
  const std::string& t = s.str();
  bool has = !p.empty() && p.size() <= t.size() && t.compare(t.size() - p.size(), p.size(), p) == 0;
  return Value::string(has ? t.substr(0, t.size() - p.size()) : t);
}

// str.format with {} / {0} / {name} fields, !r / !s conversions and {{ }} escapes; format specs are refused.
Value m_format(Interp& in, const Value& s, CallArgs& a) {
  const std::string& f = s.str();
  std::string out;
  size_t auto_idx = 0;
  for (size_t i = 0; i < f.size(); ++i) {
    char c = f[i];
    if (c == '}' ) {
      if (i + 1 < f.size() && f[i + 1] == '}') ++i;
      else fail("Single '}' encountered in format string");
      out += '}';
      continue;
    }
    if (c != '{') {
      out += c;
      continue;
    }
    if (i + 1 < f.size() && f[i + 1] == '{') {
      out += '{';
      ++i;
      continue;
    }
    size_t close = f.find('}', i);
    if (close == std::string::npos) fail("Single '{' encountered in format string");
    std::string field = f.substr(i + 1, close - i - 1);
    i = close;
    char conv = 's';
    size_t bang = field.find('!');
    if (bang != std::string::npos) {
      conv = bang + 1 < field.size() ? field[bang + 1] : 's';
      field = field.substr(0, bang);
    }
    if (field.find(':') != std::string::npos) fail("format specs in str.format() are not supported");
    const Value* arg = nullptr;
    if (field.empty()) {
      if (auto_idx >= a.positional.size()) fail("Replacement index " + std::to_string(auto_idx) + " out of range");
      arg = &a.positional[auto_idx++];
    } else if (std::all_of(field.begin(), field.end(), [](char ch) { return ch >= '0' && ch <= '9'; })) {
      size_t idx = std::stoul(field);
      if (idx >= a.positional.size()) fail("Replacement index " + field + " out of range");
      arg = &a.positional[idx];
    } else {
      for (const auto& [k, v] : a.keyword)
        if (k == field) arg = &v;
      if (!arg) fail("KeyError: " + py_str_repr(field));
    }
    out += conv == 'r' ? repr(*arg) : to_str(*arg);
    in.check_string_size(out.size());
  }
  return Value::string(std::move(out));
}

Value m_dict_get(Interp&, const Value& d, CallArgs& a) {
  ArgReader args(a, "get", {"key", "default"});
  if (!args.get(0)) fail("get expected at least 1 argument, got 0");
  const Value* v = d.dict_obj().find(*args.get(0));
  return v ? *v : args.get_or(1, Value::none());
}
Value m_dict_items(Interp& in, const Value& d, CallArgs& a) { return in.apply_filter("items", d, a); }
Value m_dict_keys(Interp&, const Value& d, CallArgs& a) {
  ArgReader(a, "keys", {});
  return Value::list(iterate(d));
}
Value m_dict_values(Interp&, const Value& d, CallArgs& a) {
  ArgReader(a, "values", {});
  std::vector<Value> out;
  for (const auto& e : d.dict_obj().entries) out.push_back(e.second);
  return Value::list(std::move(out));
}

Value m_list_index(Interp&, const Value& l, CallArgs& a) {
  ArgReader args(a, "index", {"value"});
  if (!args.get(0)) fail("index expected 1 argument, got 0");
  for (size_t i = 0; i < l.items().size(); ++i)
    if (equals(l.items()[i], *args.get(0))) return Value::integer(static_cast<int64_t>(i));
  fail(repr(*args.get(0)) + " is not in list");
}
Value m_list_count(Interp&, const Value& l, CallArgs& a) {
  ArgReader args(a, "count", {"value"});
  if (!args.get(0)) fail("count expected 1 argument, got 0");
  int64_t n = 0;
  for (const auto& x : l.items()) n += equals(x, *args.get(0));
  return Value::integer(n);
}

Value unsafe(const Value& obj, const std::string& name) {
  return Value::undefined("access to attribute '" + name + "' of '" + type_name(obj) + "' object is unsafe.");
}

}  // namespace

Value get_method(const Value& obj, const std::string& name) {
  static const std::unordered_map<std::string, Method> str_methods = {
      {"strip", m_strip},           {"lstrip", m_lstrip},       {"rstrip", m_rstrip},
      {"split", m_split},           {"rsplit", m_rsplit},       {"splitlines", m_splitlines},
      {"startswith", m_startswith}, {"endswith", m_endswith},   {"replace", m_replace},
      {"upper", m_upper},           {"lower", m_lower},         {"title", m_title},
      {"capitalize", m_capitalize}, {"find", m_find},           {"rfind", m_rfind},
      {"count", m_count},           {"join", m_join},           {"format", m_format},
      {"isspace", m_isspace},       {"isdigit", m_isdigit},     {"isalpha", m_isalpha},
      {"isalnum", m_isalnum},       {"isupper", m_isupper},     {"islower", m_islower},
      {"removeprefix", m_removeprefix}, {"removesuffix", m_removesuffix},
  };
  static const std::unordered_map<std::string, Method> dict_methods = {
      {"get", m_dict_get}, {"items", m_dict_items}, {"keys", m_dict_keys}, {"values", m_dict_values}};
  static const std::unordered_map<std::string, Method> list_methods = {{"index", m_list_index}, {"count", m_list_count}};
  static const std::set<std::string> dict_unsafe = {"pop", "popitem", "setdefault", "update", "clear"};
  static const std::set<std::string> list_unsafe = {"append", "extend", "insert", "pop", "remove", "reverse", "sort", "clear"};

  const std::unordered_map<std::string, Method>* table = nullptr;
  if (obj.is_string()) table = &str_methods;
  else if (obj.is_dict()) table = &dict_methods;
  else if (obj.is_list()) table = &list_methods;
  if (table) {
    auto it = table->find(name);
    if (it != table->end()) return bind(obj, name, it->second);
  }
  if ((obj.is_dict() && dict_unsafe.count(name)) || (obj.is_list() && !obj.is_tuple() && list_unsafe.count(name)))
    return unsafe(obj, name);
  return Value::undefined("'" + type_name(obj) + " object' has no attribute '" + name + "'");
}

}  // namespace kairo::jinja
