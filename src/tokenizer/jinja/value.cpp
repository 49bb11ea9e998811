#include "tokenizer/jinja/value.h"

#include <algorithm>
#include <cmath>

#include "tokenizer/jinja/error.h"
#include "tokenizer/jinja/py_text.h"

namespace kairo::jinja {

static void check_depth(int depth) {
  if (depth > kMaxValueDepth)
    fail("value nests deeper than " + std::to_string(kMaxValueDepth) + " levels; flatten the data passed to the template");
}

Value Value::list(std::vector<Value> items, bool is_tuple) {
  auto obj = std::make_shared<ListObj>();
  int depth = 0;
  bool ns = false;
  for (const auto& it : items) {
    depth = std::max(depth, it.depth());
    ns = ns || it.holds_namespace();
  }
  obj->depth = depth + 1;
  check_depth(obj->depth);
  obj->holds_namespace = ns;
  obj->items = std::move(items);
  obj->is_tuple = is_tuple;
  Value v;
  v.kind_ = Kind::List;
  v.obj_ = std::move(obj);
  return v;
}

Value Value::dict(std::shared_ptr<const DictObj> d) {
  check_depth(d->depth);
  Value v;
  v.kind_ = Kind::Dict;
  v.obj_ = std::move(d);
  return v;
}

Value Value::callable(std::string name, std::function<Value(Interp&, CallArgs&)> fn) {
  auto obj = std::make_shared<CallableObj>();
  obj->name = std::move(name);
  obj->fn = std::move(fn);
  Value v;
  v.kind_ = Kind::Callable;
  v.obj_ = std::move(obj);
  return v;
}

Value Value::namespace_obj(std::shared_ptr<NamespaceObj> ns) {
  Value v;
  v.kind_ = Kind::Namespace;
  v.obj_ = std::move(ns);
  return v;
}

const std::string& Value::undefined_hint() const {
  static const std::string kEmpty;
  return str_ ? *str_ : kEmpty;
}
const ListObj& Value::list_obj() const { return *static_cast<const ListObj*>(obj_.get()); }
const std::vector<Value>& Value::items() const { return list_obj().items; }
bool Value::is_tuple() const { return list_obj().is_tuple; }
const DictObj& Value::dict_obj() const { return *static_cast<const DictObj*>(obj_.get()); }
const CallableObj& Value::callable_obj() const { return *static_cast<const CallableObj*>(obj_.get()); }
NamespaceObj& Value::namespace_obj() const {
  return *const_cast<NamespaceObj*>(static_cast<const NamespaceObj*>(obj_.get()));
}

int Value::depth() const {
  if (kind_ == Kind::List) return list_obj().depth;
  if (kind_ == Kind::Dict) return dict_obj().depth;
  return 0;
}
bool Value::holds_namespace() const {
  if (kind_ == Kind::Namespace) return true;
  if (kind_ == Kind::List) return list_obj().holds_namespace;
  if (kind_ == Kind::Dict) return dict_obj().holds_namespace;
  return false;
}

std::string hash_key(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::String: return "s" + v.str();
    case Value::Kind::Bool:
    case Value::Kind::Int: return "n" + std::to_string(v.as_int());
    case Value::Kind::Float: {
      double d = v.as_double();
      if (std::floor(d) == d && std::fabs(d) < 9.2e18) return "n" + std::to_string(static_cast<int64_t>(d));
      return "f" + py_float_repr(d);
    }
    case Value::Kind::None: return "0";
    case Value::Kind::List:
      if (v.is_tuple()) {
        std::string k = "t";
        for (const auto& it : v.items()) k += hash_key(it) + '\x1f';
        return k;
      }
      break;
    default: break;
  }
  fail("unhashable type: '" + type_name(v) + "'");
}

const Value* DictObj::find(const Value& key) const {
  if (!key.is_string() && !key.is_number() && !key.is_none() && !(key.is_list() && key.is_tuple())) return nullptr;
  auto it = index.find(hash_key(key));
  return it == index.end() ? nullptr : &entries[it->second].second;
}
const Value* DictObj::find(const std::string& key) const {
  auto it = index.find("s" + key);
  return it == index.end() ? nullptr : &entries[it->second].second;
}
void DictObj::set(Value key, Value value) {
  std::string h = hash_key(key);
  depth = std::max(depth, value.depth() + 1);
  holds_namespace = holds_namespace || value.holds_namespace();
  auto it = index.find(h);
  if (it != index.end()) {
    entries[it->second].second = std::move(value);
    return;
  }
  index.emplace(std::move(h), entries.size());
  entries.emplace_back(std::move(key), std::move(value));
}

std::string type_name(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::Undefined: return "Undefined";
    case Value::Kind::None: return "NoneType";
    case Value::Kind::Bool: return "bool";
    case Value::Kind::Int: return "int";
    case Value::Kind::Float: return "float";
    case Value::Kind::String: return v.is_markup() ? "Markup" : "str";
    case Value::Kind::List: return v.is_tuple() ? "tuple" : "list";
    case Value::Kind::Dict: return "dict";
    case Value::Kind::Callable: return "function";
    case Value::Kind::Namespace: return "Namespace";
  }
  return "object";
}

bool truthy(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::Undefined:
    case Value::Kind::None: return false;
    case Value::Kind::Bool:
    case Value::Kind::Int: return v.as_int() != 0;
    case Value::Kind::Float: return v.as_double() != 0.0;
    case Value::Kind::String: return !v.str().empty();
    case Value::Kind::List: return !v.items().empty();
    case Value::Kind::Dict: return !v.dict_obj().entries.empty();
    default: return true;
  }
}

bool equals(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) {
    if (a.is_float() || b.is_float()) return a.as_double() == b.as_double();
    return a.as_int() == b.as_int();
  }
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case Value::Kind::Undefined:
    case Value::Kind::None: return true;
    case Value::Kind::String: return a.str() == b.str();
    case Value::Kind::List: {
      if (a.is_tuple() != b.is_tuple()) return false;
      const auto &x = a.items(), &y = b.items();
      if (x.size() != y.size()) return false;
      for (size_t i = 0; i < x.size(); ++i)
        if (!equals(x[i], y[i])) return false;
      return true;
    }
    case Value::Kind::Dict: {
      const auto &x = a.dict_obj(), &y = b.dict_obj();
      if (x.entries.size() != y.entries.size()) return false;
      for (const auto& [k, v] : x.entries) {
        const Value* other = y.find(k);
        if (!other || !equals(v, *other)) return false;
      }
      return true;
    }
    case Value::Kind::Callable: return &a.callable_obj() == &b.callable_obj();
    case Value::Kind::Namespace: return &a.namespace_obj() == &b.namespace_obj();
    default: return false;
  }
}

bool less_than(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) {
    if (a.is_float() || b.is_float()) return a.as_double() < b.as_double();
    return a.as_int() < b.as_int();
  }
  if (a.is_string() && b.is_string()) {
    // Python compares code points; UTF-8 byte order is the same order.
    return a.str() < b.str();
  }
  if (a.is_list() && b.is_list() && a.is_tuple() == b.is_tuple()) {
    const auto &x = a.items(), &y = b.items();
    for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
      if (equals(x[i], y[i])) continue;
      return less_than(x[i], y[i]);
    }
    return x.size() < y.size();
  }
  fail("'<' not supported between instances of '" + type_name(a) + "' and '" + type_name(b) + "'");
}

static void append_repr(std::string& out, const Value& v);

static void append_seq(std::string& out, const Value& v) {
  const auto& items = v.items();
  out += v.is_tuple() ? '(' : '[';
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) out += ", ";
    append_repr(out, items[i]);
  }
  if (v.is_tuple() && items.size() == 1) out += ',';
  out += v.is_tuple() ? ')' : ']';
}

static void append_dict(std::string& out, const DictObj& d) {
  out += '{';
  bool first = true;
  for (const auto& [k, val] : d.entries) {
    if (!first) out += ", ";
    first = false;
    append_repr(out, k);
    out += ": ";
    append_repr(out, val);
  }
  out += '}';
}

static void append_repr(std::string& out, const Value& v) {
  switch (v.kind()) {
    case Value::Kind::String: out += py_str_repr(v.str()); return;
    case Value::Kind::List: append_seq(out, v); return;
    case Value::Kind::Dict: append_dict(out, v.dict_obj()); return;
    case Value::Kind::Undefined: return;
    default: out += to_str(v); return;
  }
}

std::string to_str(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::Undefined: return "";
    case Value::Kind::None: return "None";
    case Value::Kind::Bool: return v.as_bool() ? "True" : "False";
    case Value::Kind::Int: return std::to_string(v.as_int());
    case Value::Kind::Float: return py_float_repr(v.as_double());
    case Value::Kind::String: return v.str();
    case Value::Kind::Callable: return "<function " + v.callable_obj().name + ">";
    case Value::Kind::Namespace: {
      std::string out = "<Namespace ";
      append_dict(out, v.namespace_obj().attrs);
      return out + ">";
    }
    default: {
      std::string out;
      append_repr(out, v);
      return out;
    }
  }
}

std::string repr(const Value& v) {
  std::string out;
  append_repr(out, v);
  return out;
}

static Value from_json_at(const nlohmann::ordered_json& j, int depth) {
  check_depth(depth);
  switch (j.type()) {
    case nlohmann::ordered_json::value_t::null: return Value::none();
    case nlohmann::ordered_json::value_t::boolean: return Value::boolean(j.get<bool>());
    case nlohmann::ordered_json::value_t::number_integer: return Value::integer(j.get<int64_t>());
    case nlohmann::ordered_json::value_t::number_unsigned: {
      uint64_t u = j.get<uint64_t>();
      if (u > static_cast<uint64_t>(INT64_MAX)) return Value::number(static_cast<double>(u));
      return Value::integer(static_cast<int64_t>(u));
    }
    case nlohmann::ordered_json::value_t::number_float: return Value::number(j.get<double>());
    case nlohmann::ordered_json::value_t::string: return Value::string(j.get<std::string>());
    case nlohmann::ordered_json::value_t::array: {
      std::vector<Value> items;
      items.reserve(j.size());
      for (const auto& e : j) items.push_back(from_json_at(e, depth + 1));
      return Value::list(std::move(items));
    }
    case nlohmann::ordered_json::value_t::object: {
      auto d = std::make_shared<DictObj>();
      for (auto it = j.begin(); it != j.end(); ++it) d->set(Value::string(it.key()), from_json_at(it.value(), depth + 1));
      return Value::dict(std::move(d));
    }
    default: return Value::none();  // binary / discarded do not occur in parsed JSON text
  }
}

Value from_json(const nlohmann::ordered_json& j) { return from_json_at(j, 0); }

}  // namespace kairo::jinja
