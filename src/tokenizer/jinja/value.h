#pragma once
// Runtime values of the Jinja interpreter, with Python semantics (what Hugging Face templates were written
// against): None/bool/int/float/str, lists and tuples, insertion-ordered dicts, callables, namespaces and Jinja's
// default Undefined (prints as "", iterates as empty, raises when used in arithmetic or attribute access).
// Containers are immutable once built (Hugging Face renders with ImmutableSandboxedEnvironment); only namespace
// attributes can change, and a namespace may not be stored inside another value so no reference cycle can form.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace kairo::jinja {

class Value;
class Interp;
struct ListObj;
struct DictObj;
struct CallableObj;
struct NamespaceObj;

// Deepest container nesting a value may have; bounds every recursive walk (printing, tojson, comparison).
inline constexpr int kMaxValueDepth = 256;

struct CallArgs {
  std::vector<Value> positional;
  std::vector<std::pair<std::string, Value>> keyword;
};

class Value {
 public:
  enum class Kind : uint8_t { Undefined, None, Bool, Int, Float, String, List, Dict, Callable, Namespace };

  Value() = default;  // Undefined without a hint
  static Value undefined(std::string hint) { Value v; v.str_ = std::make_shared<const std::string>(std::move(hint)); return v; }
  static Value none() { Value v; v.kind_ = Kind::None; return v; }
  static Value boolean(bool b) { Value v; v.kind_ = Kind::Bool; v.i_ = b; return v; }
  static Value integer(int64_t i) { Value v; v.kind_ = Kind::Int; v.i_ = i; return v; }
  static Value number(double f) { Value v; v.kind_ = Kind::Float; v.f_ = f; return v; }
  static Value string(std::string s) { Value v; v.kind_ = Kind::String; v.str_ = std::make_shared<const std::string>(std::move(s)); return v; }
  // markupsafe's Markup: text already safe for HTML (markup.h says what treats it differently from a str).
  static Value markup(std::string s) { Value v = string(std::move(s)); v.markup_ = true; return v; }
  static Value list(std::vector<Value> items, bool is_tuple = false);
  static Value dict(std::shared_ptr<const DictObj> d);
  static Value callable(std::string name, std::function<Value(Interp&, CallArgs&)> fn);
  static Value namespace_obj(std::shared_ptr<NamespaceObj> ns);

  Kind kind() const { return kind_; }
  bool is_undefined() const { return kind_ == Kind::Undefined; }
  bool is_none() const { return kind_ == Kind::None; }
  bool is_bool() const { return kind_ == Kind::Bool; }
  bool is_int() const { return kind_ == Kind::Int; }  // not bool
  bool is_float() const { return kind_ == Kind::Float; }
  bool is_number() const { return kind_ == Kind::Int || kind_ == Kind::Float || kind_ == Kind::Bool; }
  bool is_string() const { return kind_ == Kind::String; }  // str or Markup
  bool is_markup() const { return kind_ == Kind::String && markup_; }
  bool is_list() const { return kind_ == Kind::List; }
  bool is_dict() const { return kind_ == Kind::Dict; }
  bool is_callable() const { return kind_ == Kind::Callable; }
  bool is_namespace() const { return kind_ == Kind::Namespace; }

  bool as_bool() const { return i_ != 0; }
  int64_t as_int() const { return i_; }  // Int or Bool
  double as_double() const { return kind_ == Kind::Float ? f_ : static_cast<double>(i_); }
  const std::string& str() const { return *str_; }  // String
  const std::string& undefined_hint() const;        // Undefined
  const ListObj& list_obj() const;
  const std::vector<Value>& items() const;          // List
  bool is_tuple() const;
  const DictObj& dict_obj() const;
  const CallableObj& callable_obj() const;
  NamespaceObj& namespace_obj() const;

  // Container nesting depth (0 for scalars) and whether a namespace is reachable from this value.
  int depth() const;
  bool holds_namespace() const;

 private:
  Kind kind_ = Kind::Undefined;
  bool markup_ = false;  // a String that is Markup
  int64_t i_ = 0;
  double f_ = 0;
  std::shared_ptr<const std::string> str_;  // String text, or the Undefined hint
  std::shared_ptr<const void> obj_;         // ListObj / DictObj / CallableObj / NamespaceObj
};

struct ListObj {
  std::vector<Value> items;
  bool is_tuple = false;
  int depth = 1;
  bool holds_namespace = false;
};

// Insertion-ordered mapping; keys are hashable Python values (str, int, float, bool, None).
struct DictObj {
  std::vector<std::pair<Value, Value>> entries;
  std::unordered_map<std::string, size_t> index;  // hash_key(key) -> position in entries
  int depth = 1;
  bool holds_namespace = false;

  const Value* find(const Value& key) const;
  const Value* find(const std::string& key) const;
  // Inserts or overwrites (keeping the first insertion position, like Python). Throws for unhashable keys.
  void set(Value key, Value value);
};

struct CallableObj {
  std::string name;
  std::function<Value(Interp&, CallArgs&)> fn;
};

struct NamespaceObj {
  DictObj attrs;
};

// Key under which a hashable value is indexed in a DictObj (1, 1.0 and True collide, as in Python).
// Throws TemplateError("unhashable type: 'list'") for lists and dicts.
std::string hash_key(const Value& v);

// Python-style type name used in error messages: "int", "str", "list", "dict", "NoneType"...
std::string type_name(const Value& v);

bool truthy(const Value& v);
// Python ==, with Jinja's Undefined == Undefined.
bool equals(const Value& a, const Value& b);
// Python <; throws TemplateError for unorderable types.
bool less_than(const Value& a, const Value& b);

// str(x) and repr(x) as Python prints them ("None", "True", "1.5", "[1, 'a']", "{'k': None}").
std::string to_str(const Value& v);
std::string repr(const Value& v);

// JSON <-> Value. Keys keep their input order. Throws TemplateError when nesting exceeds kMaxValueDepth.
Value from_json(const nlohmann::ordered_json& j);

// Number of code points in a UTF-8 string (Python len()).
size_t utf8_length(const std::string& s);

}  // namespace kairo::jinja
