#include "gguf/value.h"

#include <cmath>
#include <limits>

#include "core/format.h"

namespace kairo::gguf {

const char* value_type_name(ValueType t) {
  switch (t) {
    case ValueType::UINT8: return "uint8";
    case ValueType::INT8: return "int8";
    case ValueType::UINT16: return "uint16";
    case ValueType::INT16: return "int16";
    case ValueType::UINT32: return "uint32";
    case ValueType::INT32: return "int32";
    case ValueType::FLOAT32: return "float32";
    case ValueType::BOOL: return "bool";
    case ValueType::STRING: return "string";
    case ValueType::ARRAY: return "array";
    case ValueType::UINT64: return "uint64";
    case ValueType::INT64: return "int64";
    case ValueType::FLOAT64: return "float64";
  }
  return "unknown";
}

Value Value::uint(ValueType t, uint64_t v) {
  Value out;
  out.type_ = t;
  out.u_ = v;
  return out;
}
Value Value::sint(ValueType t, int64_t v) {
  Value out;
  out.type_ = t;
  out.i_ = v;
  return out;
}
Value Value::real(ValueType t, double v) {
  Value out;
  out.type_ = t;
  out.f_ = v;
  return out;
}
Value Value::boolean(bool v) {
  Value out;
  out.type_ = ValueType::BOOL;
  out.u_ = v ? 1 : 0;
  return out;
}
Value Value::string(std::string v) {
  Value out;
  out.type_ = ValueType::STRING;
  out.s_ = std::move(v);
  return out;
}
Value Value::array(ValueType elem_type, std::vector<Value> items) {
  Value out;
  out.type_ = ValueType::ARRAY;
  out.elem_type_ = elem_type;
  out.items_ = std::move(items);
  return out;
}
Value Value::string_array(const std::vector<std::string>& v) {
  std::vector<Value> items;
  items.reserve(v.size());
  for (const auto& s : v) items.push_back(string(s));
  return array(ValueType::STRING, std::move(items));
}
Value Value::f32_array(const std::vector<float>& v) {
  std::vector<Value> items;
  items.reserve(v.size());
  for (float f : v) items.push_back(f32(f));
  return array(ValueType::FLOAT32, std::move(items));
}
Value Value::i32_array(const std::vector<int32_t>& v) {
  std::vector<Value> items;
  items.reserve(v.size());
  for (int32_t i : v) items.push_back(i32(i));
  return array(ValueType::INT32, std::move(items));
}

bool Value::is_integer() const {
  switch (type_) {
    case ValueType::UINT8: case ValueType::UINT16: case ValueType::UINT32: case ValueType::UINT64:
    case ValueType::INT8: case ValueType::INT16: case ValueType::INT32: case ValueType::INT64:
      return true;
    default:
      return false;
  }
}

static bool is_unsigned_type(ValueType t) {
  return t == ValueType::UINT8 || t == ValueType::UINT16 || t == ValueType::UINT32 || t == ValueType::UINT64;
}

std::optional<int64_t> Value::as_int() const {
  if (!is_integer()) return std::nullopt;
  if (is_unsigned_type(type_)) {
    if (u_ > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return std::nullopt;
    return static_cast<int64_t>(u_);
  }
  return i_;
}

std::optional<uint64_t> Value::as_uint() const {
  if (!is_integer()) return std::nullopt;
  if (is_unsigned_type(type_)) return u_;
  if (i_ < 0) return std::nullopt;
  return static_cast<uint64_t>(i_);
}

std::optional<double> Value::as_float() const {
  if (is_float()) return f_;
  if (is_integer()) {
    if (is_unsigned_type(type_)) return static_cast<double>(u_);
    return static_cast<double>(i_);
  }
  return std::nullopt;
}

std::optional<bool> Value::as_bool() const {
  if (type_ != ValueType::BOOL) return std::nullopt;
  return u_ != 0;
}

const std::string* Value::as_string() const { return type_ == ValueType::STRING ? &s_ : nullptr; }

std::string Value::to_display(size_t max_items) const {
  switch (type_) {
    case ValueType::STRING: return quote_for_error(s_, 80);
    case ValueType::BOOL: return u_ ? "true" : "false";
    case ValueType::FLOAT32: case ValueType::FLOAT64: return strprintf("%g", f_);
    case ValueType::ARRAY: {
      std::string out = strprintf("[%s x %zu] [", value_type_name(elem_type_), items_.size());
      for (size_t i = 0; i < items_.size() && i < max_items; ++i) {
        if (i) out += ", ";
        out += items_[i].to_display(max_items);
      }
      if (items_.size() > max_items) out += ", ...";
      return out + "]";
    }
    default:
      if (is_unsigned_type(type_)) return strprintf("%llu", static_cast<unsigned long long>(u_));
      return strprintf("%lld", static_cast<long long>(i_));
  }
}

}  // namespace kairo::gguf
