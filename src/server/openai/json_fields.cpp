#include "server/openai/json_fields.h"

#include <algorithm>
#include <cmath>

#include "core/format.h"

namespace kairo::server::json_fields {

const char* kind_of(const json& value) {
  switch (value.type()) {
    case json::value_t::null: return "null";
    case json::value_t::boolean: return "a boolean";
    case json::value_t::string: return "a string";
    case json::value_t::array: return "an array";
    case json::value_t::object: return "an object";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned: return "an integer";
    case json::value_t::number_float: return "a number";
    default: return "an unsupported value";
  }
}

std::string preview(const json& value) {
  if (value.is_string()) return quote_for_error(value.get<std::string>(), 40);
  if (value.is_array()) return strprintf("an array of %zu", value.size());
  if (value.is_object()) return "an object";
  return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

MaybeError required_string(const json& obj, const char* key, const std::string& param, std::string& out) {
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_string()) {
    return invalid_param(param, strprintf("'%s' must be a string", param.c_str()));
  }
  out = it->get<std::string>();
  return std::nullopt;
}

MaybeError joined_text_parts(const json& content, const std::string& param, const PartText& part_text,
                             std::string& out) {
  if (content.is_string()) {
    out = content.get<std::string>();
    return std::nullopt;
  }
  if (!content.is_array()) {
    return invalid_param(param, strprintf("'%s' must be a string or an array of content parts, got %s",
                                          param.c_str(), kind_of(content)));
  }
  for (size_t j = 0; j < content.size(); ++j) {
    const json& part = content[j];
    const std::string pp = strprintf("%s[%zu]", param.c_str(), j);
    if (!part.is_object()) {
      return invalid_param(pp, strprintf("'%s' must be an object, got %s", pp.c_str(), kind_of(part)));
    }
    std::string type, text;
    if (auto e = required_string(part, "type", pp + ".type", type)) return e;
    if (auto e = part_text(part, pp, type, text)) return e;
    if (j > 0) out += "\n";
    out += text;
  }
  return std::nullopt;
}

bool present(const json& obj, const char* key) {
  auto it = obj.find(key);
  return it != obj.end() && !it->is_null();
}

int json_nesting_depth(const std::string& text, int stop_above) {
  int depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      deepest = std::max(deepest, ++depth);
      if (deepest > stop_above) return deepest;
    } else if (c == '}' || c == ']') {
      --depth;
    }
  }
  return deepest;
}

namespace {

const json* find(const json& obj, const char* key) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return nullptr;
  return &*it;
}

ApiError wrong_type(const std::string& param, const char* expected, const json& got) {
  return invalid_param(param, strprintf("'%s' must be %s, got %s", param.c_str(), expected, kind_of(got)));
}

}  // namespace

MaybeError get_bool(const json& obj, const char* key, const std::string& param, bool& out) {
  const json* v = find(obj, key);
  if (!v) return std::nullopt;
  if (!v->is_boolean()) return wrong_type(param, "a boolean (true or false)", *v);
  out = v->get<bool>();
  return std::nullopt;
}

MaybeError check_int_value(const json& v, const std::string& param, int64_t min, int64_t max, int64_t& out) {
  auto out_of_range = [&] {
    return invalid_param(param, strprintf("'%s' must be an integer from %lld to %lld, got %s", param.c_str(),
                                          static_cast<long long>(min), static_cast<long long>(max),
                                          preview(v).c_str()));
  };
  if (v.is_number_unsigned()) {
    const uint64_t u = v.get<uint64_t>();
    if (u > static_cast<uint64_t>(max) || (min > 0 && u < static_cast<uint64_t>(min))) return out_of_range();
    out = static_cast<int64_t>(u);
  } else if (v.is_number_integer()) {
    const int64_t i = v.get<int64_t>();
    if (i < min || i > max) return out_of_range();
    out = i;
  } else if (v.is_number_float()) {
    const double d = v.get<double>();
    if (!std::isfinite(d) || d != std::floor(d)) return wrong_type(param, "an integer", v);
    // 2^63 and up fit no int64 (and INT64_MAX as a double rounds up to 2^63, so `d > max` alone lets it through).
    if (d < static_cast<double>(min) || d >= 0x1p63 || static_cast<int64_t>(d) > max) return out_of_range();
    out = static_cast<int64_t>(d);
  } else {
    return wrong_type(param, "an integer", v);
  }
  return std::nullopt;
}

MaybeError get_int(const json& obj, const char* key, const std::string& param, int64_t min, int64_t max,
                   int64_t& out) {
  const json* v = find(obj, key);
  if (!v) return std::nullopt;
  return check_int_value(*v, param, min, max, out);
}

MaybeError get_int(const json& obj, const char* key, const std::string& param, int64_t min, int64_t max, int& out) {
  int64_t wide = out;
  if (auto e = get_int(obj, key, param, min, max, wide)) return e;
  out = static_cast<int>(wide);
  return std::nullopt;
}

MaybeError get_number(const json& obj, const char* key, const std::string& param, double min, double max,
                      float& out) {
  const json* v = find(obj, key);
  if (!v) return std::nullopt;
  if (!v->is_number()) return wrong_type(param, "a number", *v);
  const double d = v->get<double>();
  if (!std::isfinite(d) || d < min || d > max) {
    return invalid_param(param, strprintf("'%s' must be a number from %g to %g, got %s", param.c_str(), min, max,
                                          preview(*v).c_str()));
  }
  out = static_cast<float>(d);
  return std::nullopt;
}

MaybeError get_string(const json& obj, const char* key, const std::string& param, size_t max_bytes,
                      std::string& out) {
  const json* v = find(obj, key);
  if (!v) return std::nullopt;
  if (!v->is_string()) return wrong_type(param, "a string", *v);
  const auto& s = v->get_ref<const std::string&>();
  if (s.size() > max_bytes) {
    return invalid_param(param, strprintf("'%s' is %zu bytes long; at most %zu are accepted", param.c_str(),
                                          s.size(), max_bytes));
  }
  out = s;
  return std::nullopt;
}

}  // namespace kairo::server::json_fields
