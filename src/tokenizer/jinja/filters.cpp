// Jinja2's builtin filters (jinja2/filters.py) plus Hugging Face's `tojson`, with the same argument names and
// defaults so templates written against Python behave the same. This file holds the name -> filter table and the
// argument readers shared by the filter groups; the filters themselves live in filters_{text,sequence,value}.cpp.
#include <cmath>
#include <string>

#include "tokenizer/jinja/error.h"
#include "tokenizer/jinja/filters_shared.h"

namespace kairo::jinja {
namespace detail {

int64_t int_arg(const Value* v, int64_t fallback, const char* what) {
  if (!v || v->is_undefined() || v->is_none()) return fallback;
  if (v->is_int() || v->is_bool()) return v->as_int();
  if (v->is_float()) {
    // A float argument is truncated like Python's int(); one that no int64 holds (inf, NaN, 1e300) would be
    // undefined behaviour to convert, so it is an error that names the argument.
    double d = v->as_double();
    if (!std::isfinite(d) || std::fabs(d) >= 9.2e18)
      fail(std::string(what) + " must be an integer that fits in 64 bits, not " + to_str(*v));
    return static_cast<int64_t>(d);
  }
  fail(std::string(what) + " must be an integer, not " + type_name(*v));
}

std::string str_arg(const Value* v, const std::string& fallback) {
  return v && !v->is_undefined() ? to_str(*v) : fallback;
}

}  // namespace detail

namespace {

const detail::FilterTable& filter_table() {
  static const detail::FilterTable table = [] {
    detail::FilterTable t;
    detail::add_text_filters(t);
    detail::add_sequence_filters(t);
    detail::add_value_filters(t);
    return t;
  }();
  return table;
}

}  // namespace

FilterFn find_filter(const std::string& name) {
  const auto& t = filter_table();
  auto it = t.find(name);
  return it == t.end() ? nullptr : it->second;
}

}  // namespace kairo::jinja
