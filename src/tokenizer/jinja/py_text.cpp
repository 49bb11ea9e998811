#include "tokenizer/jinja/py_text.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>

#include "tokenizer/jinja/error.h"
#include "tokenizer/jinja/value.h"

namespace kairo::jinja {

std::string py_float_repr(double x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  std::string out = std::signbit(x) ? "-" : "";
  x = std::fabs(x);
  if (x == 0) return out + "0.0";
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof(buf), x, std::chars_format::scientific);
  std::string sci(buf, res.ptr);  // shortest round-trip digits, e.g. "1.2345678901234568e+17"
  size_t e_pos = sci.find('e');
  std::string digits;
  for (size_t i = 0; i < e_pos; ++i)
    if (sci[i] != '.') digits += sci[i];
  int exp10 = std::stoi(sci.substr(e_pos + 1));
  int decpt = exp10 + 1;  // position of the decimal point relative to the digits
  int n = static_cast<int>(digits.size());
  if (decpt <= -4 || decpt > 16) {
    out += digits[0];
    if (n > 1) out += "." + digits.substr(1);
    int e = decpt - 1;
    out += e < 0 ? "e-" : "e+";
    std::string es = std::to_string(std::abs(e));
    if (es.size() < 2) es = "0" + es;
    return out + es;
  }
  if (decpt <= 0) return out + "0." + std::string(-decpt, '0') + digits;
  if (decpt >= n) return out + digits + std::string(decpt - n, '0') + ".0";
  return out + digits.substr(0, decpt) + "." + digits.substr(decpt);
}

void utf8_append(std::string& out, uint32_t cp) {
  if (cp >= 0xDC80 && cp <= 0xDCFF) {  // an undecodable byte carried through (surrogateescape)
    out += static_cast<char>(cp - 0xDC00);
  } else if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

std::vector<uint32_t> utf8_decode(const std::string& s) {
  std::vector<uint32_t> cps;
  cps.reserve(s.size());
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  size_t n = s.size(), i = 0;
  while (i < n) {
    unsigned char c = p[i];
    int len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    uint32_t cp = 0;
    bool ok = len > 0 && i + len <= n;
    if (ok && len == 1) cp = c;
    if (ok && len > 1) {
      cp = c & (0x7F >> len);
      for (int k = 1; k < len; ++k) {
        if ((p[i + k] & 0xC0) != 0x80) { ok = false; break; }
        cp = (cp << 6) | (p[i + k] & 0x3F);
      }
      static const uint32_t kMin[5] = {0, 0, 0x80, 0x800, 0x10000};
      if (ok && (cp < kMin[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))) ok = false;
    }
    if (!ok) {
      cps.push_back(0xDC00 + c);
      i += 1;
    } else {
      cps.push_back(cp);
      i += len;
    }
  }
  return cps;
}

std::string utf8_encode(const std::vector<uint32_t>& cps, size_t begin, size_t end) {
  std::string out;
  end = std::min(end, cps.size());
  for (size_t i = begin; i < end; ++i) utf8_append(out, cps[i]);
  return out;
}

bool is_ascii(const std::string& s) {
  for (unsigned char c : s)
    if (c >= 0x80) return false;
  return true;
}

size_t utf8_length(const std::string& s) {
  if (is_ascii(s)) return s.size();
  return utf8_decode(s).size();
}

bool py_isspace(uint32_t cp) {
  return (cp >= 0x09 && cp <= 0x0D) || (cp >= 0x1C && cp <= 0x20) || cp == 0x85 || cp == 0xA0 || cp == 0x1680 ||
         (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 || cp == 0x202F || cp == 0x205F ||
         cp == 0x3000;
}

uint32_t py_upper(uint32_t cp) {
  if (cp < 0x80) return (cp >= 'a' && cp <= 'z') ? cp - 32 : cp;
  if (cp >= 0xE0 && cp <= 0xFE && cp != 0xF7) return cp - 32;
  if (cp == 0xFF) return 0x178;
  if (cp == 0xB5) return 0x39C;
  if (cp >= 0x100 && cp <= 0x17F) {
    if ((cp <= 0x137 || (cp >= 0x14A && cp <= 0x177)) && (cp & 1)) return cp - 1;
    if (((cp >= 0x139 && cp <= 0x148) || (cp >= 0x179 && cp <= 0x17E)) && !(cp & 1)) return cp - 1;
    if (cp == 0x131) return 'I';
    if (cp == 0x17F) return 'S';
    return cp;
  }
  if (cp >= 0x3B1 && cp <= 0x3C9 && cp != 0x3C2) return cp - 32;
  if (cp == 0x3C2) return 0x3A3;
  if (cp == 0x3AC) return 0x386;
  if (cp >= 0x3AD && cp <= 0x3AF) return cp - 37;
  if (cp == 0x3CC) return 0x38C;
  if (cp == 0x3CD || cp == 0x3CE) return cp - 63;
  if (cp >= 0x430 && cp <= 0x44F) return cp - 32;
  if (cp >= 0x450 && cp <= 0x45F) return cp - 80;
  if (((cp >= 0x460 && cp <= 0x481) || (cp >= 0x48A && cp <= 0x4BF)) && (cp & 1)) return cp - 1;
  if (cp >= 0x561 && cp <= 0x586) return cp - 48;
  if (cp >= 0xFF41 && cp <= 0xFF5A) return cp - 32;
  return cp;
}

uint32_t py_lower(uint32_t cp) {
  if (cp < 0x80) return (cp >= 'A' && cp <= 'Z') ? cp + 32 : cp;
  if (cp >= 0xC0 && cp <= 0xDE && cp != 0xD7) return cp + 32;
  if (cp == 0x178) return 0xFF;
  if (cp >= 0x100 && cp <= 0x17F) {
    if ((cp <= 0x137 || (cp >= 0x14A && cp <= 0x177)) && !(cp & 1)) return cp == 0x130 ? 'i' : cp + 1;
    if (((cp >= 0x139 && cp <= 0x148) || (cp >= 0x179 && cp <= 0x17E)) && (cp & 1)) return cp + 1;
    return cp;
  }
  if (cp >= 0x391 && cp <= 0x3A9 && cp != 0x3A2) return cp + 32;
  if (cp == 0x386) return 0x3AC;
  if (cp >= 0x388 && cp <= 0x38A) return cp + 37;
  if (cp == 0x38C) return 0x3CC;
  if (cp == 0x38E || cp == 0x38F) return cp + 63;
  if (cp >= 0x410 && cp <= 0x42F) return cp + 32;
  if (cp >= 0x400 && cp <= 0x40F) return cp + 80;
  if (((cp >= 0x460 && cp <= 0x481) || (cp >= 0x48A && cp <= 0x4BF)) && !(cp & 1)) return cp + 1;
  if (cp >= 0x531 && cp <= 0x556) return cp + 48;
  if (cp >= 0xFF21 && cp <= 0xFF3A) return cp + 32;
  return cp;
}

bool py_isalpha_cased(uint32_t cp) { return py_upper(cp) != cp || py_lower(cp) != cp; }

static std::string map_case(const std::string& s, uint32_t (*f)(uint32_t)) {
  if (is_ascii(s)) {
    std::string out = s;
    for (char& c : out) c = static_cast<char>(f(static_cast<unsigned char>(c)));
    return out;
  }
  std::string out;
  out.reserve(s.size());
  for (uint32_t cp : utf8_decode(s)) {
    if (cp == 0xDF && f == py_upper) out += "SS";  // the one common one-to-many mapping (German sharp s)
    else utf8_append(out, f(cp));
  }
  return out;
}
std::string str_upper(const std::string& s) { return map_case(s, py_upper); }
std::string str_lower(const std::string& s) { return map_case(s, py_lower); }

std::string str_strip(const std::string& s, const std::string* chars, bool left, bool right) {
  std::vector<uint32_t> cps = utf8_decode(s);
  std::vector<uint32_t> set;
  if (chars) set = utf8_decode(*chars);
  auto strip_it = [&](uint32_t cp) {
    return chars ? std::find(set.begin(), set.end(), cp) != set.end() : py_isspace(cp);
  };
  size_t b = 0, e = cps.size();
  if (left)
    while (b < e && strip_it(cps[b])) ++b;
  if (right)
    while (e > b && strip_it(cps[e - 1])) --e;
  return utf8_encode(cps, b, e);
}

std::string py_str_repr(const std::string& s) {
  bool has_single = s.find('\'') != std::string::npos, has_double = s.find('"') != std::string::npos;
  char q = (has_single && !has_double) ? '"' : '\'';
  std::string out(1, q);
  for (uint32_t cp : utf8_decode(s)) {
    char buf[16];
    if (cp == static_cast<uint32_t>(q) || cp == '\\') {
      out += '\\';
      out += static_cast<char>(cp);
    } else if (cp == '\n') {
      out += "\\n";
    } else if (cp == '\r') {
      out += "\\r";
    } else if (cp == '\t') {
      out += "\\t";
    } else if (cp < 0x20 || (cp >= 0x7F && cp <= 0xA0) || cp == 0xAD || (cp >= 0xDC80 && cp <= 0xDCFF)) {
      std::snprintf(buf, sizeof(buf), "\\x%02x", cp >= 0xDC80 ? cp - 0xDC00 : cp);
      out += buf;
    } else if ((cp >= 0x2000 && cp <= 0x200F) || (cp >= 0x2028 && cp <= 0x202F) || cp == 0x3000 || cp == 0xFEFF) {
      std::snprintf(buf, sizeof(buf), "\\u%04x", cp);
      out += buf;
    } else {
      utf8_append(out, cp);
    }
  }
  out += q;
  return out;
}

static void json_string(std::string& out, const std::string& s, bool ensure_ascii) {
  out += '"';
  auto put_u = [&](uint32_t u) {
    char buf[16];
    std::snprintf(buf, sizeof(buf), "\\u%04x", u);
    out += buf;
  };
  auto escape_cp = [&](uint32_t cp) {
    switch (cp) {
      case '"': out += "\\\""; return;
      case '\\': out += "\\\\"; return;
      case '\n': out += "\\n"; return;
      case '\r': out += "\\r"; return;
      case '\t': out += "\\t"; return;
      case '\b': out += "\\b"; return;
      case '\f': out += "\\f"; return;
      default: break;
    }
    if (cp < 0x20) {
      put_u(cp);
    } else if (ensure_ascii && cp >= 0x80) {
      if (cp >= 0x10000) {
        uint32_t v = cp - 0x10000;
        put_u(0xD800 + (v >> 10));
        put_u(0xDC00 + (v & 0x3FF));
      } else {
        put_u(cp);
      }
    } else {
      utf8_append(out, cp);
    }
  };
  if (is_ascii(s)) {
    for (unsigned char c : s) escape_cp(c);
  } else {
    for (uint32_t cp : utf8_decode(s)) escape_cp(cp);
  }
  out += '"';
}

static std::string json_number(const Value& v) {
  if (v.is_float()) {
    double d = v.as_double();
    if (std::isnan(d)) return "NaN";
    if (std::isinf(d)) return d > 0 ? "Infinity" : "-Infinity";
    return py_float_repr(d);
  }
  return std::to_string(v.as_int());
}

static void json_dump(std::string& out, const Value& v, const JsonDumpOptions& opt, int level) {
  auto newline = [&](int lvl) {
    out += '\n';
    for (int i = 0; i < lvl; ++i) out += opt.indent;
  };
  switch (v.kind()) {
    case Value::Kind::None: out += "null"; return;
    case Value::Kind::Bool: out += v.as_bool() ? "true" : "false"; return;
    case Value::Kind::Int:
    case Value::Kind::Float: out += json_number(v); return;
    case Value::Kind::String: json_string(out, v.str(), opt.ensure_ascii); return;
    case Value::Kind::List: {
      const auto& items = v.items();
      if (items.empty()) { out += "[]"; return; }
      out += '[';
      for (size_t i = 0; i < items.size(); ++i) {
        if (i) out += opt.item_separator;
        if (opt.has_indent) newline(level + 1);
        json_dump(out, items[i], opt, level + 1);
      }
      if (opt.has_indent) newline(level);
      out += ']';
      return;
    }
    case Value::Kind::Dict:
    case Value::Kind::Namespace: {
      const DictObj& d = v.is_dict() ? v.dict_obj() : v.namespace_obj().attrs;
      if (v.is_namespace()) fail("Object of type Namespace is not JSON serializable");
      if (d.entries.empty()) { out += "{}"; return; }
      std::vector<std::pair<std::string, const Value*>> entries;
      for (const auto& [k, val] : d.entries) {
        std::string key;
        if (k.is_string()) key = k.str();
        else if (k.is_bool()) key = k.as_bool() ? "true" : "false";
        else if (k.is_int() || k.is_float()) key = json_number(k);
        else if (k.is_none()) key = "null";
        else fail("keys must be str, int, float, bool or None, not " + type_name(k));
        entries.emplace_back(std::move(key), &val);
      }
      if (opt.sort_keys)
        std::stable_sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
      out += '{';
      for (size_t i = 0; i < entries.size(); ++i) {
        if (i) out += opt.item_separator;
        if (opt.has_indent) newline(level + 1);
        json_string(out, entries[i].first, opt.ensure_ascii);
        out += opt.key_separator;
        json_dump(out, *entries[i].second, opt, level + 1);
      }
      if (opt.has_indent) newline(level);
      out += '}';
      return;
    }
    case Value::Kind::Undefined: fail("Object of type Undefined is not JSON serializable");
    case Value::Kind::Callable: fail("Object of type function is not JSON serializable");
  }
}

std::string py_json_dumps(const Value& v, const JsonDumpOptions& opt) {
  std::string out;
  json_dump(out, v, opt, 0);
  return out;
}

}  // namespace kairo::jinja
