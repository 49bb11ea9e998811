// Jinja2's builtin tests (jinja2/tests.py): `x is defined`, `x is string`, `n is divisibleby 3`...
#include <unordered_map>

#include "tokenizer/jinja/error.h"
#include "tokenizer/jinja/interp.h"
#include "tokenizer/jinja/py_text.h"

namespace kairo::jinja {
namespace {

const Value& one_arg(const CallArgs& a, const char* test) {
  if (a.positional.size() == 1 && a.keyword.empty()) return a.positional[0];
  if (a.positional.empty() && a.keyword.size() == 1) return a.keyword[0].second;
  fail(std::string("test '") + test + "' takes exactly one argument");
}
void no_args(const CallArgs& a, const char* test) {
  if (!a.positional.empty() || !a.keyword.empty()) fail(std::string("test '") + test + "' takes no arguments");
}

#define SIMPLE_TEST(fn, name, expr)                     \
  bool fn(Interp&, const Value& v, CallArgs& a) {       \
    no_args(a, name);                                   \
    return (expr);                                      \
  }

SIMPLE_TEST(t_defined, "defined", !v.is_undefined())
SIMPLE_TEST(t_undefined, "undefined", v.is_undefined())
SIMPLE_TEST(t_none, "none", v.is_none())
SIMPLE_TEST(t_boolean, "boolean", v.is_bool())
SIMPLE_TEST(t_false, "false", v.is_bool() && !v.as_bool())
SIMPLE_TEST(t_true, "true", v.is_bool() && v.as_bool())
SIMPLE_TEST(t_integer, "integer", v.is_int())
SIMPLE_TEST(t_float, "float", v.is_float())
SIMPLE_TEST(t_number, "number", v.is_number())
SIMPLE_TEST(t_string, "string", v.is_string())
SIMPLE_TEST(t_mapping, "mapping", v.is_dict())
SIMPLE_TEST(t_sequence, "sequence", v.is_string() || v.is_list() || v.is_dict() || v.is_undefined())
SIMPLE_TEST(t_iterable, "iterable", v.is_string() || v.is_list() || v.is_dict() || v.is_undefined())
SIMPLE_TEST(t_callable, "callable", v.is_callable())
SIMPLE_TEST(t_escaped, "escaped", v.is_markup())
SIMPLE_TEST(t_lower, "lower", [&] {
  std::string s = to_str(v);
  return str_lower(s) == s && str_upper(s) != s;
}())
SIMPLE_TEST(t_upper, "upper", [&] {
  std::string s = to_str(v);
  return str_upper(s) == s && str_lower(s) != s;
}())

bool t_odd(Interp& in, const Value& v, CallArgs& a) {
  no_args(a, "odd");
  return equals(binary_op(in, "%", v, Value::integer(2)), Value::integer(1));
}
bool t_even(Interp& in, const Value& v, CallArgs& a) {
  no_args(a, "even");
  return equals(binary_op(in, "%", v, Value::integer(2)), Value::integer(0));
}
bool t_divisibleby(Interp& in, const Value& v, CallArgs& a) {
  return equals(binary_op(in, "%", v, one_arg(a, "divisibleby")), Value::integer(0));
}
bool t_eq(Interp&, const Value& v, CallArgs& a) { return equals(v, one_arg(a, "eq")); }
bool t_ne(Interp&, const Value& v, CallArgs& a) { return !equals(v, one_arg(a, "ne")); }
bool t_lt(Interp&, const Value& v, CallArgs& a) {
  require_defined(v);
  return less_than(v, one_arg(a, "lt"));
}
bool t_le(Interp&, const Value& v, CallArgs& a) {
  require_defined(v);
  const Value& o = one_arg(a, "le");
  return less_than(v, o) || equals(v, o);
}
bool t_gt(Interp&, const Value& v, CallArgs& a) {
  require_defined(v);
  return less_than(one_arg(a, "gt"), v);
}
bool t_ge(Interp&, const Value& v, CallArgs& a) {
  require_defined(v);
  const Value& o = one_arg(a, "ge");
  return less_than(o, v) || equals(v, o);
}
bool t_in(Interp&, const Value& v, CallArgs& a) { return contains(one_arg(a, "in"), v); }
bool t_sameas(Interp&, const Value& v, CallArgs& a) {
  const Value& o = one_arg(a, "sameas");
  if (v.kind() != o.kind()) return false;
  if (v.is_none() || v.is_bool() || v.is_undefined()) return equals(v, o);
  if (v.is_list()) return &v.list_obj() == &o.list_obj();
  if (v.is_dict()) return &v.dict_obj() == &o.dict_obj();
  return equals(v, o);
}
bool t_filter(Interp&, const Value& v, CallArgs& a) {
  no_args(a, "filter");
  return v.is_string() && find_filter(v.str()) != nullptr;
}
bool t_test(Interp&, const Value& v, CallArgs& a) {
  no_args(a, "test");
  return v.is_string() && find_test(v.str()) != nullptr;
}

const std::unordered_map<std::string, TestFn>& test_table() {
  static const std::unordered_map<std::string, TestFn> table = {
      {"defined", t_defined},   {"undefined", t_undefined}, {"none", t_none},         {"boolean", t_boolean},
      {"false", t_false},       {"true", t_true},           {"integer", t_integer},   {"float", t_float},
      {"number", t_number},     {"string", t_string},       {"mapping", t_mapping},   {"sequence", t_sequence},
      {"iterable", t_iterable}, {"callable", t_callable},   {"escaped", t_escaped},   {"lower", t_lower},
      {"upper", t_upper},       {"odd", t_odd},             {"even", t_even},         {"divisibleby", t_divisibleby},
      {"eq", t_eq},             {"equalto", t_eq},          {"==", t_eq},             {"ne", t_ne},
      {"!=", t_ne},             {"lt", t_lt},               {"lessthan", t_lt},       {"<", t_lt},
      {"le", t_le},             {"<=", t_le},               {"gt", t_gt},             {"greaterthan", t_gt},
      {">", t_gt},              {"ge", t_ge},               {">=", t_ge},             {"in", t_in},
      {"sameas", t_sameas},     {"filter", t_filter},       {"test", t_test},
  };
  return table;
}

}  // namespace

TestFn find_test(const std::string& name) {
  const auto& t = test_table();
  auto it = t.find(name);
  return it == t.end() ? nullptr : it->second;
}

}  // namespace kairo::jinja
