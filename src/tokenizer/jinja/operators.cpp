// Python operator semantics for template expressions: arithmetic, concatenation, membership, attribute and item
// access, slicing and printf-style formatting, with Jinja's Undefined rules.
#include <cctype>
#include <cmath>
#include <cstdio>
#include <optional>

#include "tokenizer/jinja/error.h"
#include "tokenizer/jinja/interp.h"
#include "tokenizer/jinja/markup.h"
#include "tokenizer/jinja/py_text.h"

namespace kairo::jinja {

void require_defined(const Value& v) {
  if (!v.is_undefined()) return;
  fail(v.undefined_hint().empty() ? std::string("value is undefined") : v.undefined_hint());
}

std::vector<Value> iterate(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::Undefined: return {};
    case Value::Kind::List: return v.items();
    case Value::Kind::Dict: {
      std::vector<Value> keys;
      for (const auto& e : v.dict_obj().entries) keys.push_back(e.first);
      return keys;
    }
    case Value::Kind::String: {
      std::vector<Value> chars;
      for (uint32_t cp : utf8_decode(v.str())) {
        std::string c;
        utf8_append(c, cp);
        chars.push_back(Value::string(std::move(c)));
      }
      return chars;
    }
    default: fail("'" + type_name(v) + "' object is not iterable");
  }
}

// object_type_repr() of Jinja's Undefined messages.
static std::string object_desc(const Value& v) {
  if (v.is_none()) return "None";
  if (v.is_namespace()) return "jinja2.utils.Namespace object";
  return type_name(v) + " object";
}

static Value missing_attr(const Value& obj, const std::string& name) {
  return Value::undefined("'" + object_desc(obj) + "' has no attribute '" + name + "'");
}

Value get_attr(const Value& obj, const std::string& name) {
  require_defined(obj);
  if (obj.is_namespace()) {
    const Value* v = obj.namespace_obj().attrs.find(name);
    return v ? *v : missing_attr(obj, name);
  }
  if (obj.is_dict() || obj.is_list() || obj.is_string()) {
    // Python attributes win over keys for dot access (`d.items` is the method even when d has an "items" key).
    Value m = get_method(obj, name);
    if (!m.is_undefined() || !obj.is_dict()) return m;
    if (m.undefined_hint().find("is unsafe") != std::string::npos) return m;  // d.update etc.
    const Value* v = obj.dict_obj().find(name);
    return v ? *v : missing_attr(obj, name);
  }
  return missing_attr(obj, name);
}

static bool to_index(const Value& key, int64_t size, int64_t& idx) {
  if (!key.is_int() && !key.is_bool()) return false;
  idx = key.as_int();
  if (idx < 0) idx += size;
  return idx >= 0 && idx < size;
}

Value get_item(const Value& obj, const Value& key) {
  require_defined(obj);
  auto no_element = [&]() {
    if (key.is_string()) return missing_attr(obj, key.str());
    return Value::undefined(object_desc(obj) + " has no element " + repr(key));
  };
  if (obj.is_dict()) {
    if (key.is_list() && !key.is_tuple()) fail("unhashable type: 'list'");
    const Value* v = obj.dict_obj().find(key);
    if (v) return *v;
    if (key.is_string()) {
      Value m = get_method(obj, key.str());
      if (!m.is_undefined()) return m;
    }
    return no_element();
  }
  if (obj.is_list()) {
    int64_t idx;
    if (to_index(key, static_cast<int64_t>(obj.items().size()), idx)) return obj.items()[idx];
    if (key.is_string()) return get_attr(obj, key.str());
    return no_element();
  }
  if (obj.is_string()) {
    if (key.is_string()) return get_attr(obj, key.str());
    const std::string& s = obj.str();
    if (is_ascii(s)) {
      int64_t idx;
      if (to_index(key, static_cast<int64_t>(s.size()), idx)) return Value::string(std::string(1, s[idx]));
      return no_element();
    }
    std::vector<uint32_t> cps = utf8_decode(s);
    int64_t idx;
    if (to_index(key, static_cast<int64_t>(cps.size()), idx)) return Value::string(utf8_encode(cps, idx, idx + 1));
    return no_element();
  }
  if (obj.is_namespace() && key.is_string()) return get_attr(obj, key.str());
  return no_element();
}

// Python slice.indices(): clamps start/stop for the given length and step.
static void slice_indices(int64_t len, const Value& start, const Value& stop, const Value& step, int64_t& b,
                          int64_t& e, int64_t& st) {
  auto as_opt = [](const Value& v, const char* what) -> std::optional<int64_t> {
    if (v.is_undefined() || v.is_none()) return std::nullopt;
    if (!v.is_int() && !v.is_bool()) fail(std::string("slice ") + what + " must be an integer or None");
    return v.as_int();
  };
  st = as_opt(step, "step").value_or(1);
  if (st == 0) fail("slice step cannot be zero");
  auto clamp = [&](std::optional<int64_t> v, int64_t dflt) {
    if (!v) return dflt;
    int64_t x = *v;
    if (x < 0) {
      x += len;
      if (x < 0) x = st < 0 ? -1 : 0;
    } else if (x >= len) {
      x = st < 0 ? len - 1 : len;
    }
    return x;
  };
  b = clamp(as_opt(start, "start"), st < 0 ? len - 1 : 0);
  e = clamp(as_opt(stop, "stop"), st < 0 ? -1 : len);
}

template <typename T>
static std::vector<T> do_slice(const std::vector<T>& v, const Value& start, const Value& stop, const Value& step) {
  int64_t b, e, st;
  slice_indices(static_cast<int64_t>(v.size()), start, stop, step, b, e, st);
  std::vector<T> out;
  if (st > 0)
    for (int64_t i = b; i < e; i += st) out.push_back(v[i]);
  else
    for (int64_t i = b; i > e; i += st) out.push_back(v[i]);
  return out;
}

Value slice(Interp& in, const Value& obj, const Value& start, const Value& stop, const Value& step) {
  require_defined(obj);
  if (obj.is_list()) return Value::list(do_slice(obj.items(), start, stop, step), obj.is_tuple());
  if (obj.is_string()) {
    if (is_ascii(obj.str())) {
      std::vector<char> chars(obj.str().begin(), obj.str().end());
      std::vector<char> r = do_slice(chars, start, stop, step);
      return Value::string(std::string(r.begin(), r.end()));
    }
    return Value::string(utf8_encode(do_slice(utf8_decode(obj.str()), start, stop, step)));
  }
  fail("'" + type_name(obj) + "' object is not subscriptable");
}

bool contains(const Value& container, const Value& item) {
  switch (container.kind()) {
    case Value::Kind::Undefined: return false;
    case Value::Kind::String:
      if (!item.is_string()) fail("'in <string>' requires string as left operand, not " + type_name(item));
      return container.str().find(item.str()) != std::string::npos;
    case Value::Kind::List:
      for (const auto& x : container.items())
        if (equals(x, item)) return true;
      return false;
    case Value::Kind::Dict:
      if (item.is_list() && !item.is_tuple()) fail("unhashable type: 'list'");
      if (item.is_dict()) fail("unhashable type: 'dict'");
      return container.dict_obj().find(item) != nullptr;
    default: fail("argument of type '" + type_name(container) + "' is not iterable");
  }
}

[[noreturn]] static void unsupported(const std::string& op, const Value& a, const Value& b) {
  fail("unsupported operand type(s) for " + op + ": '" + type_name(a) + "' and '" + type_name(b) + "'");
}

static void check_overflow(bool overflow, const std::string& op) {
  if (overflow) fail("integer overflow in '" + op + "' (the result does not fit in 64 bits)");
}

static Value repeat(Interp& in, const Value& seq, int64_t n) {
  if (n < 0) n = 0;
  if (seq.is_string()) {
    size_t len = seq.str().size();
    if (len && static_cast<uint64_t>(n) > in.options().max_output_bytes / len + 1) in.check_string_size(SIZE_MAX);
    in.check_string_size(len * n);
    std::string out;
    out.reserve(len * n);
    for (int64_t i = 0; i < n; ++i) out += seq.str();
    return seq.is_markup() ? Value::markup(std::move(out)) : Value::string(std::move(out));
  }
  size_t len = seq.items().size();
  if (len && static_cast<uint64_t>(n) > static_cast<uint64_t>(in.options().max_loop_iterations) / len + 1)
    in.check_list_size(SIZE_MAX);
  in.check_list_size(len * n);
  std::vector<Value> out;
  out.reserve(len * n);
  for (int64_t i = 0; i < n; ++i) out.insert(out.end(), seq.items().begin(), seq.items().end());
  return Value::list(std::move(out), seq.is_tuple());
}

static Value int_pow(int64_t base, int64_t exp) {
  int64_t result = 1;
  while (exp > 0) {
    if (exp & 1) check_overflow(__builtin_mul_overflow(result, base, &result), "**");
    exp >>= 1;
    if (exp) check_overflow(__builtin_mul_overflow(base, base, &base), "**");
  }
  return Value::integer(result);
}

Value binary_op(Interp& in, const std::string& op, const Value& a, const Value& b) {
  if (op == "~") {
    std::string sa = to_str(a), sb = to_str(b);
    in.check_string_size(sa.size() + sb.size());
    return Value::string(sa + sb);
  }
  require_defined(a);
  require_defined(b);
  bool nums = a.is_number() && b.is_number();
  bool ints = nums && !a.is_float() && !b.is_float();
  int64_t r = 0;
  if (op == "+") {
    if (ints) {
      check_overflow(__builtin_add_overflow(a.as_int(), b.as_int(), &r), op);
      return Value::integer(r);
    }
    if (nums) return Value::number(a.as_double() + b.as_double());
    if (a.is_string() && b.is_string()) {
      if (a.is_markup() || b.is_markup()) return concat_markup(in, a, b);
      in.check_string_size(a.str().size() + b.str().size());
      return Value::string(a.str() + b.str());
    }
    if (a.is_markup() || b.is_markup()) unsupported(op, a, b);  // Markup.__add__ gives NotImplemented
    if (a.is_list() && b.is_list() && a.is_tuple() == b.is_tuple()) {
      in.check_list_size(a.items().size() + b.items().size());
      std::vector<Value> out = a.items();
      out.insert(out.end(), b.items().begin(), b.items().end());
      return Value::list(std::move(out), a.is_tuple());
    }
    if (a.is_string()) fail("can only concatenate str (not \"" + type_name(b) + "\") to str");
    if (a.is_list()) fail("can only concatenate " + type_name(a) + " (not \"" + type_name(b) + "\") to " + type_name(a));
    unsupported(op, a, b);
  }
  if (op == "-") {
    if (ints) {
      check_overflow(__builtin_sub_overflow(a.as_int(), b.as_int(), &r), op);
      return Value::integer(r);
    }
    if (nums) return Value::number(a.as_double() - b.as_double());
    unsupported(op, a, b);
  }
  if (op == "*") {
    if (ints) {
      check_overflow(__builtin_mul_overflow(a.as_int(), b.as_int(), &r), op);
      return Value::integer(r);
    }
    if (nums) return Value::number(a.as_double() * b.as_double());
    if ((a.is_string() || a.is_list()) && (b.is_int() || b.is_bool())) return repeat(in, a, b.as_int());
    if ((b.is_string() || b.is_list()) && (a.is_int() || a.is_bool())) return repeat(in, b, a.as_int());
    fail("can't multiply sequence by non-int of type '" + type_name(a.is_number() ? a : b) + "'");
  }
  if (op == "/") {
    if (!nums) unsupported(op, a, b);
    if (b.as_double() == 0) fail("division by zero");
    return Value::number(a.as_double() / b.as_double());
  }
  if (op == "//" || op == "%") {
    if (op == "%" && a.is_string()) {
      std::string s = percent_format(in, a.str(), b, a.is_markup());
      in.check_string_size(s.size());
      return a.is_markup() ? Value::markup(std::move(s)) : Value::string(std::move(s));
    }
    if (!nums) unsupported(op, a, b);
    if (ints) {
      int64_t x = a.as_int(), y = b.as_int();
      if (y == 0) fail("integer division or modulo by zero");
      if (x == INT64_MIN && y == -1) {
        if (op == "%") return Value::integer(0);
        fail("integer overflow in '//' (the result does not fit in 64 bits)");
      }
      int64_t q = x / y, m = x % y;
      if (m != 0 && ((m < 0) != (y < 0))) {
        q -= 1;
        m += y;
      }
      return Value::integer(op == "//" ? q : m);
    }
    double x = a.as_double(), y = b.as_double();
    if (y == 0) fail(op == "//" ? "float floor division by zero" : "float modulo");
    // CPython's float_divmod, so results match to the last bit.
    double mod = std::fmod(x, y);
    double div = (x - mod) / y;
    if (mod != 0) {
      if ((y < 0) != (mod < 0)) {
        mod += y;
        div -= 1.0;
      }
    } else {
      mod = std::copysign(0.0, y);
    }
    if (op == "%") return Value::number(mod);
    double floordiv;
    if (div != 0) {
      floordiv = std::floor(div);
      if (div - floordiv > 0.5) floordiv += 1.0;
    } else {
      floordiv = std::copysign(0.0, x / y);
    }
    return Value::number(floordiv);
  }
  if (op == "**") {
    if (!nums) unsupported(op, a, b);
    if (ints && b.as_int() >= 0) return int_pow(a.as_int(), b.as_int());
    if (a.as_double() == 0 && b.as_double() < 0) fail("0.0 cannot be raised to a negative power");
    return Value::number(std::pow(a.as_double(), b.as_double()));
  }
  fail("unknown operator '" + op + "'");
}

Value unary_op(const std::string& op, const Value& a) {
  if (op == "not") return Value::boolean(!truthy(a));
  require_defined(a);
  if (op == "-") {
    if (a.is_float()) return Value::number(-a.as_double());
    if (a.is_number()) {
      if (a.as_int() == INT64_MIN) fail("integer overflow in unary '-'");
      return Value::integer(-a.as_int());
    }
    fail("bad operand type for unary -: '" + type_name(a) + "'");
  }
  if (a.is_float()) return a;
  if (a.is_number()) return Value::integer(a.as_int());
  fail("bad operand type for unary +: '" + type_name(a) + "'");
}

// snprintf into a string of the exact size (the caller has bounded width and precision).
template <typename T>
static std::string c_format(const std::string& spec, T v) {
  int n = std::snprintf(nullptr, 0, spec.c_str(), v);
  if (n < 0) fail("invalid format " + spec);
  std::string s(static_cast<size_t>(n), '\0');
  std::snprintf(s.data(), s.size() + 1, spec.c_str(), v);
  return s;
}

// printf-style formatting: %s %r %d %i %f %F %e %g %x %o %c %% with flags, width and precision.
std::string percent_format(Interp& in, const std::string& fmt, const Value& args, bool escape_args) {
  std::vector<Value> values = args.is_list() && args.is_tuple() ? args.items() : std::vector<Value>{args};
  const DictObj* mapping = args.is_dict() ? &args.dict_obj() : nullptr;
  size_t next = 0;
  std::string out;
  for (size_t i = 0; i < fmt.size(); ++i) {
    if (fmt[i] != '%') {
      out += fmt[i];
      continue;
    }
    if (++i >= fmt.size()) fail("incomplete format");
    if (fmt[i] == '%') {
      out += '%';
      continue;
    }
    const Value* arg = nullptr;
    if (fmt[i] == '(') {
      size_t close = fmt.find(')', i);
      if (close == std::string::npos || !mapping) fail("format requires a mapping");
      arg = mapping->find(fmt.substr(i + 1, close - i - 1));
      if (!arg) fail("KeyError: " + py_str_repr(fmt.substr(i + 1, close - i - 1)));
      i = close + 1;
    }
    std::string flags;
    while (i < fmt.size() && std::string("-+ #0").find(fmt[i]) != std::string::npos) flags += fmt[i++];
    // Width and precision are checked against max_output_bytes before anything is formatted.
    auto read_number = [&]() -> int64_t {
      int64_t v = 0;
      while (i < fmt.size() && std::isdigit(static_cast<unsigned char>(fmt[i]))) {
        v = v * 10 + (fmt[i++] - '0');
        if (v > static_cast<int64_t>(in.options().max_output_bytes)) in.check_string_size(SIZE_MAX);
      }
      return v;
    };
    int64_t width = read_number();
    int64_t precision = -1;
    if (i < fmt.size() && fmt[i] == '.') {
      ++i;
      precision = read_number();
    }
    if (i >= fmt.size()) fail("incomplete format");
    char conv = fmt[i];
    if (!arg) {
      if (mapping) arg = &args;
      else if (next < values.size()) arg = &values[next++];
      else fail("not enough arguments for format string");
    }
    std::string spec = "%" + flags + (width ? std::to_string(width) : "") +
                       (precision >= 0 ? "." + std::to_string(precision) : "");
    auto pad_text = [&](std::string body) {  // Python pads str fields by code points, not bytes
      int64_t len = static_cast<int64_t>(utf8_length(body));
      if (width <= len) return body;
      std::string fill(static_cast<size_t>(width - len), ' ');
      return flags.find('-') != std::string::npos ? body + fill : fill + body;
    };
    if (conv == 's' || conv == 'r' || conv == 'a') {
      std::string text = conv == 's' ? to_str(*arg) : repr(*arg);
      // markupsafe's _MarkupEscapeHelper: str() of a Markup argument stays as is, everything else is escaped
      // before precision cuts it.
      if (escape_args && !(conv == 's' && arg->is_markup())) text = html_escape(text);
      if (precision >= 0) {
        std::vector<uint32_t> cps = utf8_decode(text);
        if (static_cast<int64_t>(cps.size()) > precision) text = utf8_encode(cps, 0, static_cast<size_t>(precision));
      }
      out += pad_text(std::move(text));
    } else if (conv == 'c') {
      std::string ch;
      if (arg->is_string() && utf8_length(arg->str()) == 1) {
        ch = arg->str();
      } else if (arg->is_int() || arg->is_bool()) {
        if (arg->as_int() < 0 || arg->as_int() > 0x10FFFF) fail("%c arg not in range(0x110000)");
        utf8_append(ch, static_cast<uint32_t>(arg->as_int()));
      } else {
        fail("%c requires int or char");
      }
      out += pad_text(std::move(ch));
    } else if (conv == 'd' || conv == 'i' || conv == 'u' || conv == 'x' || conv == 'X' || conv == 'o') {
      if (!arg->is_number()) fail("%" + std::string(1, conv) + " format: a real number is required, not " + type_name(*arg));
      bool decimal = conv == 'd' || conv == 'i' || conv == 'u';
      if (arg->is_float() && !decimal) fail("%" + std::string(1, conv) + " format: an integer is required, not float");
      if (arg->is_float()) {
        double d = std::trunc(arg->as_double());
        if (std::isnan(d)) fail("cannot convert float NaN to integer");
        if (std::isinf(d)) fail("cannot convert float infinity to integer");
        if (std::fabs(d) >= 9.2e18) {
          // glibc prints the exact decimal value of the double, which is what Python's int() gives.
          out += c_format("%" + flags + (width ? std::to_string(width) : "") + ".0f", d);
        } else {
          out += c_format(spec + "lld", static_cast<long long>(d));
        }
      } else {
        out += c_format(spec + (decimal ? std::string("lld") : std::string("ll") + conv), static_cast<long long>(arg->as_int()));
      }
    } else if (std::string("eEfFgG").find(conv) != std::string::npos) {
      if (!arg->is_number()) fail("must be real number, not " + type_name(*arg));
      out += c_format(spec + conv, arg->as_double());
    } else {
      fail(std::string("unsupported format character '") + conv + "'");
    }
    in.check_string_size(out.size());
  }
  if (!mapping && next < values.size() && !(values.size() == 1 && args.is_dict()))
    fail("not all arguments converted during string formatting");
  return out;
}

}  // namespace kairo::jinja
