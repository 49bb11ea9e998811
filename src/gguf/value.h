#pragma once
// A GGUF metadata value: a scalar, a string, or an array of values of one type.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"

namespace kairo::gguf {

enum class ValueType : uint32_t {
  UINT8 = 0, INT8 = 1, UINT16 = 2, INT16 = 3, UINT32 = 4, INT32 = 5, FLOAT32 = 6, BOOL = 7,
  STRING = 8, ARRAY = 9, UINT64 = 10, INT64 = 11, FLOAT64 = 12,
};
inline constexpr uint32_t kValueTypeCount = 13;
const char* value_type_name(ValueType t);

class Value {
 public:
  Value() = default;
  static Value uint(ValueType t, uint64_t v);   // UINT8/16/32/64
  static Value sint(ValueType t, int64_t v);    // INT8/16/32/64
  static Value real(ValueType t, double v);     // FLOAT32/64
  static Value boolean(bool v);
  static Value string(std::string v);
  static Value array(ValueType elem_type, std::vector<Value> items);
  // Convenience constructors for writers.
  static Value u32(uint32_t v) { return uint(ValueType::UINT32, v); }
  static Value i32(int32_t v) { return sint(ValueType::INT32, v); }
  static Value f32(float v) { return real(ValueType::FLOAT32, v); }
  static Value string_array(const std::vector<std::string>& v);
  static Value f32_array(const std::vector<float>& v);
  static Value i32_array(const std::vector<int32_t>& v);

  ValueType type() const { return type_; }
  bool is_integer() const;
  bool is_float() const { return type_ == ValueType::FLOAT32 || type_ == ValueType::FLOAT64; }

  // Typed views; nullopt when the stored type does not fit (e.g. a negative int asked as unsigned).
  std::optional<int64_t> as_int() const;      // any integer type that fits in int64
  std::optional<uint64_t> as_uint() const;    // any non-negative integer
  std::optional<double> as_float() const;     // float types, and integers (exactly representable ones)
  std::optional<bool> as_bool() const;
  const std::string* as_string() const;       // nullptr unless STRING

  // Arrays.
  ValueType elem_type() const { return elem_type_; }
  const std::vector<Value>& items() const { return items_; }

  // Human-readable rendering for `inspect` (arrays summarised past max_items).
  std::string to_display(size_t max_items = 8) const;

 private:
  ValueType type_ = ValueType::UINT8;
  uint64_t u_ = 0;
  int64_t i_ = 0;
  double f_ = 0;
  std::string s_;
  ValueType elem_type_ = ValueType::UINT8;
  std::vector<Value> items_;
};

}  // namespace kairo::gguf
