// Functions every template can call. Hugging Face adds raise_exception and strftime_now to Jinja's defaults.
#include "tokenizer/jinja/error.h"
#include "tokenizer/jinja/interp.h"

namespace kairo::jinja {
namespace {

Value g_range(Interp& in, CallArgs& a) {
  if (!a.keyword.empty()) fail("range() takes no keyword arguments");
  if (a.positional.empty() || a.positional.size() > 3)
    fail("range expected 1 to 3 arguments, got " + std::to_string(a.positional.size()));
  int64_t p[3] = {0, 0, 0};
  for (size_t i = 0; i < a.positional.size(); ++i) {
    const Value& v = a.positional[i];
    if (!v.is_int() && !v.is_bool()) fail("'" + type_name(v) + "' object cannot be interpreted as an integer");
    p[i] = v.as_int();
  }
  int64_t start = 0, stop, step = 1;
  if (a.positional.size() == 1) {
    stop = p[0];
  } else {
    start = p[0];
    stop = p[1];
    if (a.positional.size() == 3) step = p[2];
  }
  if (step == 0) fail("range() arg 3 must not be zero");
  // Size first, so a huge range is refused before anything is allocated.
  __int128 span = step > 0 ? (__int128)stop - start : (__int128)start - stop;
  __int128 n = span <= 0 ? 0 : (span + (step > 0 ? step : -(__int128)step) - 1) / (step > 0 ? step : -(__int128)step);
  if (n > (__int128)in.options().max_loop_iterations) in.check_list_size(static_cast<size_t>(-1));
  std::vector<Value> items;
  items.reserve(static_cast<size_t>(n));
  for (int64_t i = 0; i < static_cast<int64_t>(n); ++i) items.push_back(Value::integer(start + i * step));
  return Value::list(std::move(items));
}

std::shared_ptr<DictObj> kwargs_dict(CallArgs& a, const char* fn) {
  auto d = std::make_shared<DictObj>();
  if (a.positional.size() > 1) fail(std::string(fn) + "() takes at most one positional argument");
  if (a.positional.size() == 1) {
    const Value& src = a.positional[0];
    if (src.is_dict()) {
      for (const auto& [k, v] : src.dict_obj().entries) d->set(k, v);
    } else {
      for (const auto& pair : iterate(src)) {
        std::vector<Value> kv = iterate(pair);
        if (kv.size() != 2) fail(std::string(fn) + "() sequence elements must have length 2");
        d->set(kv[0], kv[1]);
      }
    }
  }
  for (auto& [k, v] : a.keyword) {
    if (v.holds_namespace()) fail("a namespace cannot be stored inside another value");
    d->set(Value::string(k), v);
  }
  return d;
}

Value g_dict(Interp&, CallArgs& a) { return Value::dict(kwargs_dict(a, "dict")); }

Value g_namespace(Interp&, CallArgs& a) {
  auto ns = std::make_shared<NamespaceObj>();
  ns->attrs = *kwargs_dict(a, "namespace");
  return Value::namespace_obj(std::move(ns));
}

Value g_raise_exception(Interp&, CallArgs& a) {
  std::string msg = a.positional.empty() ? std::string("raise_exception() called") : to_str(a.positional[0]);
  throw TemplateError(msg, TemplateError::Kind::Raised);
}

Value g_strftime_now(Interp& in, CallArgs& a) {
  ArgReader r(a, "strftime_now", {"format"});
  if (!r.get(0) || !r.get(0)->is_string()) fail("strftime_now() needs a format string");
  return Value::string(in.strftime_now(r.get(0)->str()));
}

}  // namespace

void add_globals(Scope& scope) {
  scope.vars["range"] = Value::callable("range", g_range);
  scope.vars["dict"] = Value::callable("dict", g_dict);
  scope.vars["namespace"] = Value::callable("namespace", g_namespace);
  scope.vars["raise_exception"] = Value::callable("raise_exception", g_raise_exception);
  scope.vars["strftime_now"] = Value::callable("strftime_now", g_strftime_now);
}

}  // namespace kairo::jinja
