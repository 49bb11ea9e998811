// Filters over sequences and mappings: length, first/last, sort, unique, min/max, map, select/reject, join, sum,
// batch, items and dictsort. `attribute=` arguments walk dotted paths as Jinja's make_attrgetter does.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "tokenizer/jinja/error.h"
#include "tokenizer/jinja/filters_shared.h"
#include "tokenizer/jinja/interp.h"
#include "tokenizer/jinja/py_text.h"

namespace kairo::jinja {
namespace {

using detail::int_arg;
using detail::str_arg;

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
    if (r.get(1) && !r.get(1)->is_none()) {
      in.check_list_size(static_cast<size_t>(n));  // the padding loop below would grow a list of n items first
      while (static_cast<int64_t>(cur.size()) < n) cur.push_back(*r.get(1));
    }
    out.push_back(Value::list(std::move(cur)));
  }
  in.check_list_size(out.size());
  return Value::list(std::move(out));
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

// map(filter_name, *args) or map(attribute=..., default=...).
Value f_map(Interp& in, const Value& v, CallArgs& a) {
  // Jinja2's map, select and reject start with `if value:`, so none, undefined and other false values give an empty
  // sequence (before the arguments are even read); templates lean on that for optional fields such as `tools`.
  if (!truthy(v)) return Value::list({});
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
  if (!truthy(v)) return Value::list({});  // as in f_map
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

Value f_sum(Interp& in, const Value& v, CallArgs& a) {
  ArgReader r(a, "sum", {"attribute", "start"});
  Value total = r.get_or(1, Value::integer(0));
  for (const auto& item : iterate(v))
    total = binary_op(in, "+", total, r.get(0) && !r.get(0)->is_none() ? attr_path(item, *r.get(0)) : item);
  return total;
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

}  // namespace

void detail::add_sequence_filters(FilterTable& table) {
  table.insert({
      {"batch", f_batch},   {"count", f_length},     {"dictsort", f_dictsort}, {"first", f_first},
      {"items", f_items},   {"join", f_join},        {"last", f_last},         {"length", f_length},
      {"list", f_list},     {"map", f_map},          {"max", f_max},           {"min", f_min},
      {"reject", f_reject}, {"rejectattr", f_rejectattr}, {"reverse", f_reverse}, {"select", f_select},
      {"selectattr", f_selectattr}, {"sort", f_sort}, {"sum", f_sum},          {"unique", f_unique},
  });
}

}  // namespace kairo::jinja
