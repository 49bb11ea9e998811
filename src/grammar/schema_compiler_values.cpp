#include "grammar/schema_compiler.h"

#include <algorithm>
#include <cmath>

#include "grammar/codepoint_ranges.h"
#include "grammar/integer_range.h"
#include "grammar/json_string_formats.h"

namespace kairo::grammar::schema_detail {

std::optional<double> SchemaCompiler::bound(const json& s, const char* key, const std::string& ptr) {
  if (!s.contains(key)) return std::nullopt;
  const json& v = s[key];
  if (v.is_boolean()) {
    fail(ptr + "/" + key, strprintf("a boolean '%s' (draft 4) is not supported; give the bound as a number", key));
  }
  if (!v.is_number()) fail(ptr + "/" + key, strprintf("'%s' must be a number", key));
  return v.get<double>();
}

std::string SchemaCompiler::integer(const json& s, const std::string& ptr) {
  std::optional<int64_t> lo, hi;
  constexpr double kLimit = 9.0e15;
  auto clamp_check = [&](double v, const char* key) {
    if (std::fabs(v) > kLimit) fail(ptr + "/" + key, strprintf("bounds beyond ±%.0e are not supported", kLimit));
  };
  if (auto v = bound(s, "minimum", ptr)) { clamp_check(*v, "minimum"); lo = static_cast<int64_t>(std::ceil(*v)); }
  if (auto v = bound(s, "exclusiveMinimum", ptr)) {
    clamp_check(*v, "exclusiveMinimum");
    const int64_t e = static_cast<int64_t>(std::floor(*v)) + 1;
    lo = lo ? std::max(*lo, e) : e;
  }
  if (auto v = bound(s, "maximum", ptr)) { clamp_check(*v, "maximum"); hi = static_cast<int64_t>(std::floor(*v)); }
  if (auto v = bound(s, "exclusiveMaximum", ptr)) {
    clamp_check(*v, "exclusiveMaximum");
    const int64_t e = static_cast<int64_t>(std::ceil(*v)) - 1;
    hi = hi ? std::min(*hi, e) : e;
  }
  if (!lo && !hi) return generic_integer();
  if (lo && hi && *lo > *hi) fail(ptr, "the integer bounds leave no value");
  return writer_.add_rule("integer-range", integer_range_gbnf(lo, hi));
}

std::string SchemaCompiler::number(const json& s, const std::string& ptr) {
  const auto min = bound(s, "minimum", ptr), xmin = bound(s, "exclusiveMinimum", ptr);
  const bool has_max = s.contains("maximum") || s.contains("exclusiveMaximum");
  if (!min && !xmin && !has_max) return generic_number();
  const bool nonneg = min && *min == 0 && !xmin;
  const bool positive = xmin && *xmin == 0 && (!min || *min <= 0);
  if (has_max || !(nonneg || positive)) {
    fail(ptr, "bounds on 'number' are supported only as minimum 0 or exclusiveMinimum 0; for other bounds use "
              "type 'integer' or drop the bound");
  }
  const std::string magnitude = "( \"0\" | [1-9] [0-9]{0,15} )";
  if (nonneg) return writer_.add_rule("nonnegative-number", magnitude + " " + number_tail());
  // > 0: a non-zero integer part, or 0 with a fraction that is not all zeros.
  return writer_.add_rule(
      "positive-number",
      "( [1-9] [0-9]{0,15} ( \".\" [0-9]{1,16} )? | \"0.\" \"0\"{0,14} [1-9] [0-9]{0,8} ) ( [eE] [-+]? [0-9]{1,2} )?");
}

std::optional<uint32_t> SchemaCompiler::length_bound(const json& s, const char* key, const std::string& ptr) {
  if (!s.contains(key)) return std::nullopt;
  const json& v = s[key];
  if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<int64_t>() >= 0)) {
    fail(ptr + "/" + key, strprintf("'%s' must be a non-negative integer", key));
  }
  if (v.get<uint64_t>() > kMaxRepeatLength) {
    fail(ptr + "/" + key, strprintf("'%s' above %u is not supported", key, kMaxRepeatLength));
  }
  return static_cast<uint32_t>(v.get<uint64_t>());
}

std::string SchemaCompiler::string(const json& s, const std::string& ptr) {
  const auto min = length_bound(s, "minLength", ptr), max = length_bound(s, "maxLength", ptr);
  if (s.contains("format")) {
    if (!s["format"].is_string()) fail(ptr + "/format", "'format' must be a string");
    const std::string format = s["format"].get<std::string>();
    if (s.contains("pattern") || min || max) {
      fail(ptr, "format together with pattern/minLength/maxLength is not supported; keep only the format");
    }
    auto body = string_format_gbnf(format);
    if (!body) {
      fail(ptr + "/format", strprintf("the string format '%s' is not supported (supported: %s)", format.c_str(),
                                      supported_string_formats()));
    }
    return writer_.add_rule(format, quote() + " " + *body + " " + quote());
  }
  if (s.contains("pattern")) {
    if (!s["pattern"].is_string()) fail(ptr + "/pattern", "'pattern' must be a string");
    if (min || max) fail(ptr, "pattern together with minLength/maxLength is not supported; put the length in the pattern");
    auto body = regex_to_gbnf(s["pattern"].get<std::string>(), writer_, RegexTarget::kJsonString,
                              RegexAnchoring::kSearch);
    if (!body.ok()) fail(ptr + "/pattern", body.error().message);
    return writer_.add_rule("pattern", quote() + " " + *body + " " + quote());
  }
  if (!min && !max) return generic_string();
  if (min && max && *min > *max) fail(ptr, "minLength is above maxLength, so no string can match");
  const std::string rep = max ? strprintf("{%u,%u}", min.value_or(0), *max) : strprintf("{%u,}", *min);
  return writer_.add_rule("string-length", quote() + " " + json_char() + rep + " " + quote());
}

std::string SchemaCompiler::array(const json& s, const std::string& ptr, const std::string& hint) {
  if (s.contains("uniqueItems") && s["uniqueItems"] == true && !(s.contains("maxItems") && s["maxItems"] == 1)) {
    fail(ptr + "/uniqueItems", "uniqueItems: true is not supported (a grammar cannot compare items); drop it");
  }
  const auto min_items = length_bound(s, "minItems", ptr).value_or(0);
  std::optional<uint32_t> max_items = length_bound(s, "maxItems", ptr);
  if (max_items && *max_items < min_items) fail(ptr, "minItems is above maxItems, so no array can match");
  std::vector<std::string> prefix;
  if (s.contains("prefixItems")) {
    if (!s["prefixItems"].is_array()) fail(ptr + "/prefixItems", "'prefixItems' must be an array of schemas");
    for (size_t i = 0; i < s["prefixItems"].size(); ++i) {
      prefix.push_back(compile(s["prefixItems"][i], ptr + "/prefixItems/" + std::to_string(i), hint + "-item"));
    }
  }
  std::string rest;  // empty: no items after the prefix
  if (s.contains("items")) {
    if (s["items"].is_array()) fail(ptr + "/items", "'items' as an array (draft 7 tuples) is not supported; use prefixItems");
    if (!(s["items"].is_boolean() && !s["items"].get<bool>())) rest = compile(s["items"], ptr + "/items", hint + "-item");
  } else {
    rest = generic_value();
  }
  const uint32_t k = static_cast<uint32_t>(prefix.size());
  if (rest.empty()) {
    max_items = max_items ? std::min(*max_items, k) : k;
    if (min_items > *max_items) fail(ptr, "minItems is above the number of prefixItems and items is false");
  }
  const std::string w = ws(), comma = "\",\" " + w + " ";
  // Items from position i on, given i items already written (so each one after the first needs a comma).
  std::function<std::string(uint32_t)> from = [&](uint32_t i) -> std::string {
    if (i < k) {
      if (max_items && i >= *max_items) return "";
      const std::string item = (i ? comma : "") + prefix[i] + " " + w;
      const std::string tail = from(i + 1);
      const std::string seq = tail.empty() ? item : item + " " + tail;
      return i < min_items ? seq : "( " + seq + " )?";
    }
    if (rest.empty()) return "";
    const uint32_t lo = min_items > k ? min_items - k : 0;
    std::optional<uint32_t> hi;
    if (max_items) hi = *max_items - k;
    if (hi && *hi == 0) return "";
    const std::string item = rest + " " + w;
    auto rep = [](uint32_t a, std::optional<uint32_t> b) {
      return b ? strprintf("{%u,%u}", a, *b) : a == 0 ? std::string("*") : strprintf("{%u,}", a);
    };
    if (k > 0) return "( " + comma + item + " )" + rep(lo, hi);
    // The first item has no comma.
    const std::string more = "( " + comma + item + " )" + rep(lo > 0 ? lo - 1 : 0, hi ? std::optional(*hi - 1) : hi);
    return lo > 0 ? item + " " + more : "( " + item + " " + more + " )?";
  };
  const std::string body = from(0);
  return "\"[\" " + w + " " + (body.empty() ? "" : body + " ") + "\"]\"";
}

std::string SchemaCompiler::object(const json& s, const std::string& ptr, const std::string& hint) {
  std::vector<std::pair<std::string, std::string>> props;  // name, value expression
  std::set<std::string> required;
  if (s.contains("required")) {
    if (!s["required"].is_array()) fail(ptr + "/required", "'required' must be an array of property names");
    for (const auto& r : s["required"]) {
      if (!r.is_string()) fail(ptr + "/required", "'required' must be an array of property names");
      required.insert(r.get<std::string>());
    }
  }
  std::vector<std::string> names;
  if (s.contains("properties")) {
    if (!s["properties"].is_object()) fail(ptr + "/properties", "'properties' must be an object");
    for (const auto& [name, sub] : s["properties"].items()) names.push_back(name);
    for (const auto& name : names) {
      props.emplace_back(name, compile(s["properties"][name], ptr + "/properties/" + pointer_token(name),
                                       hint + "-" + name));
    }
  }
  for (const auto& r : required) {
    if (std::find(names.begin(), names.end(), r) == names.end()) {
      names.push_back(r);
      props.emplace_back(r, generic_value());
    }
  }
  std::string extra_value;  // empty: no additional properties
  if (s.contains("additionalProperties")) {
    const json& ap = s["additionalProperties"];
    if (!(ap.is_boolean() && !ap.get<bool>())) {
      extra_value = compile(ap, ptr + "/additionalProperties", hint + "-extra");
    }
  } else if (!s.contains("properties")) {
    extra_value = generic_value();
  }
  const std::string w = ws(), comma = "\",\" " + w + " ";
  auto member = [&](const std::string& key_expr, const std::string& value_expr) {
    return key_expr + " " + w + " \":\" " + w + " " + value_expr + " " + w;
  };
  std::string extra_rest, extra_first;
  if (!extra_value.empty()) {
    const std::string kv = writer_.add_rule(hint + "-extra-kv", member(key_excluding(names), extra_value));
    extra_rest = "( " + comma + kv + " )*";
    extra_first = "( " + kv + " " + extra_rest + " )?";
  }
  // rest[i]: properties i.. after at least one was written; first(i): none written yet.
  const size_t n = props.size();
  std::vector<std::string> rest(n + 1);
  rest[n] = extra_rest;
  for (size_t i = n; i-- > 0;) {
    const std::string kv = member(GbnfWriter::literal(json(props[i].first).dump()), props[i].second);
    const std::string tail = rest[i + 1].empty() ? "" : " " + rest[i + 1];
    rest[i] = writer_.add_rule(hint + "-rest", required.count(props[i].first) ? comma + kv + tail
                                                                              : "( " + comma + kv + " )?" + tail);
  }
  std::string first = extra_first;
  for (size_t i = n; i-- > 0;) {
    const std::string kv = member(GbnfWriter::literal(json(props[i].first).dump()), props[i].second);
    const std::string with = kv + (rest[i + 1].empty() ? "" : " " + rest[i + 1]);
    if (required.count(props[i].first)) {
      first = with;
    } else {
      first = first.empty() ? "( " + with + " )?" : "( " + with + " | " + first + " )";
    }
  }
  return "\"{\" " + w + " " + (first.empty() ? "" : first + " ") + "\"}\"";
}

std::string SchemaCompiler::key_excluding(const std::vector<std::string>& names) {
  if (names.empty()) return generic_string();
  struct Node {
    std::map<uint32_t, int> children;
    bool is_name = false;
  };
  std::vector<Node> trie(1);
  for (const auto& name : names) {
    int at = 0;
    for (uint32_t cp : decode(name)) {
      auto it = trie[at].children.find(cp);
      if (it == trie[at].children.end()) {
        trie.push_back({});
        it = trie[at].children.emplace(cp, static_cast<int>(trie.size()) - 1).first;
      }
      at = it->second;
    }
    trie[at].is_name = true;
  }
  const std::string any_tail = "( " + json_char() + " )* " + quote();
  std::function<std::string(int)> node_rule = [&](int at) -> std::string {
    std::vector<std::string> alts;
    if (!trie[at].is_name) alts.push_back(quote());
    std::vector<CodepointRange> used;
    for (const auto& [cp, child] : trie[at].children) used.push_back({cp, cp});
    const auto others = complement_ranges(normalize_ranges(used));
    if (!others.empty()) alts.push_back(char_set_gbnf(writer_, others, RegexTarget::kJsonString) + " " + any_tail);
    for (const auto& [cp, child] : trie[at].children) {
      alts.push_back(char_set_gbnf(writer_, {{cp, cp}}, RegexTarget::kJsonString) + " " + node_rule(child));
    }
    const std::string body = alternatives(alts);
    return writer_.add_rule("other-key", alts.size() == 1 ? body : body.substr(1, body.size() - 2));
  };
  return quote() + " " + node_rule(0);
}

std::u32string SchemaCompiler::decode(const std::string& s) {
  std::u32string out;
  for (size_t i = 0; i < s.size();) {
    const auto b = static_cast<uint8_t>(s[i]);
    const size_t n = b < 0x80 ? 1 : b < 0xE0 ? 2 : b < 0xF0 ? 3 : 4;
    uint32_t cp = n == 1 ? b : b & (0x7F >> n);
    for (size_t k = 1; k < n && i + k < s.size(); ++k) cp = (cp << 6) | (static_cast<uint8_t>(s[i + k]) & 0x3F);
    out.push_back(cp);
    i += n;
  }
  return out;
}

}  // namespace kairo::grammar::schema_detail
