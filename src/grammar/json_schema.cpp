#include "grammar/json_schema.h"

#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "core/format.h"
#include "grammar/codepoint_ranges.h"
#include "grammar/gbnf_writer.h"
#include "grammar/integer_range.h"
#include "grammar/json_string_formats.h"
#include "grammar/regex_grammar.h"

namespace kairo::grammar {

namespace {

// Ordered, so properties keep the order the schema writes them in.
using json = nlohmann::ordered_json;

// Errors unwind the recursive compiler to json_schema_to_gbnf, which turns them into an Error value; nothing
// outside this file sees the exception.
struct SchemaError {
  std::string message;
};

const std::set<std::string> kAnnotations = {"title", "description", "default", "examples", "$schema", "$id",
                                            "$comment", "deprecated", "readOnly", "writeOnly"};
const std::set<std::string> kHandled = {
    "type", "enum", "const", "anyOf", "oneOf", "allOf", "$ref", "$defs", "definitions", "properties", "required",
    "additionalProperties", "items", "prefixItems", "minItems", "maxItems", "uniqueItems", "minLength", "maxLength",
    "pattern", "format", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "nullable"};
const std::vector<std::string> kTypes = {"null", "boolean", "integer", "number", "string", "array", "object"};

bool is_annotation(const std::string& key) {
  return kAnnotations.count(key) || key.rfind("x-", 0) == 0 || key == "$defs" || key == "definitions";
}

std::string pointer_token(const std::string& key) {
  std::string out;
  for (char c : key) {
    if (c == '~') out += "~0";
    else if (c == '/') out += "~1";
    else out.push_back(c);
  }
  return out;
}

std::string where(const std::string& ptr) { return "#" + ptr; }

[[noreturn]] void fail(const std::string& ptr, const std::string& what) {
  throw SchemaError{strprintf("json_schema: %s (at %s)", what.c_str(), where(ptr).c_str())};
}

bool value_has_type(const json& v, const std::string& type) {
  if (type == "null") return v.is_null();
  if (type == "boolean") return v.is_boolean();
  if (type == "string") return v.is_string();
  if (type == "array") return v.is_array();
  if (type == "object") return v.is_object();
  if (type == "number") return v.is_number();
  if (type == "integer") {
    return v.is_number_integer() || (v.is_number_float() && std::floor(v.get<double>()) == v.get<double>());
  }
  return false;
}

std::string type_of_value(const json& v) {
  if (v.is_null()) return "null";
  if (v.is_boolean()) return "boolean";
  if (v.is_string()) return "string";
  if (v.is_array()) return "array";
  if (v.is_object()) return "object";
  return value_has_type(v, "integer") ? "integer" : "number";
}

std::string alternatives(const std::vector<std::string>& alts) {
  if (alts.size() == 1) return alts[0];
  std::string out = "(";
  for (size_t i = 0; i < alts.size(); ++i) out += (i ? " | " : "") + alts[i];
  return out + ")";
}

class SchemaCompiler {
 public:
  SchemaCompiler(const json& root, GbnfWriter& writer, JsonWhitespace whitespace = JsonWhitespace::Bounded)
      : root_(root), writer_(writer), whitespace_(whitespace) {}

  std::string run() {
    const std::string body = compile(root_, "", "value");
    return writer_.text(body);
  }

  // The schema as one rule of a grammar that other compilers (other roots) share.
  std::string root_rule(const std::string& hint) { return writer_.add_rule(hint, compile(root_, "", hint)); }

  std::string any_object() {
    return writer_.text(generic_object());
  }

 private:
  // --- the generic JSON rules, added on first use ---
  std::string ws() {
    if (ws_.empty()) {
      ws_ = writer_.add_rule("ws", whitespace_ == JsonWhitespace::Compact ? "\" \"?"
                                                                          : "( \" \" | \"\\n\" [ \\t]{0,20} )?");
    }
    return ws_;
  }
  std::string json_char() { return any_char_gbnf(writer_, RegexTarget::kJsonString); }
  std::string quote() { return GbnfWriter::literal("\""); }
  std::string generic_string() {
    if (string_.empty()) string_ = writer_.add_rule("string", quote() + " " + json_char() + "* " + quote());
    return string_;
  }
  std::string generic_integer() {
    if (integer_.empty()) integer_ = writer_.add_rule("integer", "\"-\"? ( \"0\" | [1-9] [0-9]{0,15} )");
    return integer_;
  }
  std::string number_tail() { return "( \".\" [0-9]{1,16} )? ( [eE] [-+]? [0-9]{1,2} )?"; }
  std::string generic_number() {
    if (number_.empty()) number_ = writer_.add_rule("number", generic_integer() + " " + number_tail());
    return number_;
  }
  std::string boolean() { return writer_.add_rule("boolean", "\"true\" | \"false\""); }
  std::string generic_value() {
    if (value_.empty()) {
      value_ = writer_.reserve("value");
      const std::string body = alternatives({generic_object(), generic_array(), generic_string(), generic_number(),
                                             boolean(), "\"null\""});
      writer_.define(value_, body.substr(1, body.size() - 2));
    }
    return value_;
  }
  std::string generic_object() {
    if (object_.empty()) {
      object_ = writer_.reserve("object");
      const std::string kv = writer_.add_rule("member", generic_string() + " " + ws() + " \":\" " + ws() + " " +
                                                            generic_value() + " " + ws());
      writer_.define(object_, "\"{\" " + ws() + " ( " + kv + " ( \",\" " + ws() + " " + kv + " )* )? \"}\"");
    }
    return object_;
  }
  std::string generic_array() {
    if (array_.empty()) {
      array_ = writer_.reserve("array");
      const std::string item = generic_value() + " " + ws();
      writer_.define(array_, "\"[\" " + ws() + " ( " + item + " ( \",\" " + ws() + " " + item + " )* )? \"]\"");
    }
    return array_;
  }

  // --- schemas ---
  std::string compile(const json& s, const std::string& ptr, const std::string& hint) {
    if (s.is_boolean()) {
      if (!s.get<bool>()) fail(ptr, "the schema is `false`, so no value can match it");
      return generic_value();
    }
    if (!s.is_object()) fail(ptr, "a schema must be an object or a boolean");
    for (const auto& [key, value] : s.items()) {
      if (!is_annotation(key) && !kHandled.count(key)) {
        fail(ptr, strprintf("the keyword '%s' is not supported; remove it or express the constraint with supported "
                            "keywords (see docs/structured-output.md)",
                            key.c_str()));
      }
    }
    auto constraining_siblings = [&](std::initializer_list<const char*> allowed) {
      std::vector<std::string> out;
      for (const auto& [key, value] : s.items()) {
        if (is_annotation(key)) continue;
        bool ok = false;
        for (const char* a : allowed) ok = ok || key == a;
        if (!ok) out.push_back(key);
      }
      return out;
    };
    if (s.contains("$ref")) {
      if (auto extra = constraining_siblings({"$ref"}); !extra.empty()) {
        fail(ptr, strprintf("'%s' beside $ref is not supported; move it into the referenced schema or use allOf",
                            extra[0].c_str()));
      }
      return ref_rule(s["$ref"], ptr + "/$ref");
    }
    if (s.contains("allOf")) return compile(merge_all_of(s, ptr), ptr, hint);
    if (s.contains("anyOf") || s.contains("oneOf")) {
      const char* key = s.contains("anyOf") ? "anyOf" : "oneOf";
      if (auto extra = constraining_siblings({key}); !extra.empty()) {
        fail(ptr, strprintf("'%s' beside %s is not supported; move it into each branch", extra[0].c_str(), key));
      }
      const json& branches = s[key];
      if (!branches.is_array() || branches.empty()) fail(ptr + "/" + key, std::string(key) + " must be a non-empty array");
      if (std::string(key) == "oneOf") check_one_of_disjoint(branches, ptr + "/oneOf");
      std::vector<std::string> alts;
      for (size_t i = 0; i < branches.size(); ++i) {
        alts.push_back(compile(branches[i], ptr + "/" + key + "/" + std::to_string(i), hint));
      }
      return alternatives(alts);
    }
    const std::vector<std::string> types = declared_types(s, ptr);
    if (s.contains("const") || s.contains("enum")) return enum_values(s, ptr, types);
    if (types.empty()) return generic_value();
    std::vector<std::string> alts;
    for (const auto& t : types) alts.push_back(compile_type(t, s, ptr, hint));
    return alternatives(alts);
  }

  // The types the schema allows: "type" (and "nullable"), or inferred from type-specific keywords; empty = any.
  std::vector<std::string> declared_types(const json& s, const std::string& ptr) {
    std::vector<std::string> types;
    if (s.contains("type")) {
      const json& t = s["type"];
      auto add = [&](const json& name) {
        if (!name.is_string() || std::find(kTypes.begin(), kTypes.end(), name.get<std::string>()) == kTypes.end()) {
          fail(ptr + "/type", "'type' must be one of null, boolean, integer, number, string, array, object "
                              "(or an array of them)");
        }
        if (std::find(types.begin(), types.end(), name.get<std::string>()) == types.end()) {
          types.push_back(name.get<std::string>());
        }
      };
      if (t.is_array()) {
        if (t.empty()) fail(ptr + "/type", "'type' is an empty array, so no value can match");
        for (const auto& name : t) add(name);
      } else {
        add(t);
      }
    } else {
      auto has_any = [&](std::initializer_list<const char*> keys) {
        for (const char* k : keys) {
          if (s.contains(k)) return true;
        }
        return false;
      };
      if (has_any({"properties", "required", "additionalProperties"})) types.push_back("object");
      if (has_any({"items", "prefixItems", "minItems", "maxItems", "uniqueItems"})) types.push_back("array");
      if (has_any({"minLength", "maxLength", "pattern", "format"})) types.push_back("string");
      if (has_any({"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"})) types.push_back("number");
      // With no type keyword, JSON Schema lets values of every other type through unconstrained.
      if (!types.empty() && !s.contains("const") && !s.contains("enum")) {
        for (const auto& t : kTypes) {
          const bool covered = std::find(types.begin(), types.end(), t) != types.end() ||
                               (t == "integer" && std::find(types.begin(), types.end(), "number") != types.end());
          if (!covered) types.push_back(t);
        }
      }
    }
    // OpenAPI's "nullable" is not JSON Schema: a JSON Schema validator ignores it, so null is not generated for it
    // (never generating null is valid under both readings).
    // "number" already includes the integers.
    if (std::find(types.begin(), types.end(), "number") != types.end()) {
      types.erase(std::remove(types.begin(), types.end(), "integer"), types.end());
    }
    return types;
  }

  std::string enum_values(const json& s, const std::string& ptr, const std::vector<std::string>& types) {
    for (const auto& [key, value] : s.items()) {
      if (!is_annotation(key) && key != "enum" && key != "const" && key != "type" && key != "nullable") {
        fail(ptr, strprintf("'%s' beside enum/const is not supported; list only the allowed values",
                            key.c_str()));
      }
    }
    std::vector<json> values;
    if (s.contains("const")) values.push_back(s["const"]);
    if (s.contains("enum")) {
      if (!s["enum"].is_array() || s["enum"].empty()) fail(ptr + "/enum", "'enum' must be a non-empty array");
      std::vector<json> listed(s["enum"].begin(), s["enum"].end());
      if (s.contains("const")) {
        // Both: the const, if the enum lists it.
        if (std::find(listed.begin(), listed.end(), values[0]) == listed.end()) values.clear();
      } else {
        values = listed;
      }
    }
    std::vector<std::string> alts;
    for (const auto& v : values) {
      bool typed = types.empty();
      for (const auto& t : types) typed = typed || value_has_type(v, t);
      if (typed) alts.push_back(GbnfWriter::literal(v.dump()));
    }
    if (alts.empty()) fail(ptr, "no value of enum/const has an allowed type, so no value can match");
    return alternatives(alts);
  }

  std::string compile_type(const std::string& type, const json& s, const std::string& ptr, const std::string& hint) {
    if (type == "null") return "\"null\"";
    if (type == "boolean") return boolean();
    if (type == "integer") return integer(s, ptr);
    if (type == "number") return number(s, ptr);
    if (type == "string") return string(s, ptr);
    if (type == "array") return writer_.add_rule(hint, array(s, ptr, hint));
    return writer_.add_rule(hint, object(s, ptr, hint));
  }

  // --- numbers ---
  std::optional<double> bound(const json& s, const char* key, const std::string& ptr) {
    if (!s.contains(key)) return std::nullopt;
    const json& v = s[key];
    if (v.is_boolean()) {
      fail(ptr + "/" + key, strprintf("a boolean '%s' (draft 4) is not supported; give the bound as a number", key));
    }
    if (!v.is_number()) fail(ptr + "/" + key, strprintf("'%s' must be a number", key));
    return v.get<double>();
  }

  std::string integer(const json& s, const std::string& ptr) {
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

  std::string number(const json& s, const std::string& ptr) {
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

  // --- strings ---
  std::optional<uint32_t> length_bound(const json& s, const char* key, const std::string& ptr) {
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
  static constexpr uint32_t kMaxRepeatLength = 1000;

  std::string string(const json& s, const std::string& ptr) {
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

  // --- arrays ---
  std::string array(const json& s, const std::string& ptr, const std::string& hint) {
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

  // --- objects ---
  std::string object(const json& s, const std::string& ptr, const std::string& hint) {
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

  // A JSON string key that is none of `names`: walks a trie of the names, leaving it at any difference.
  std::string key_excluding(const std::vector<std::string>& names) {
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

  static std::u32string decode(const std::string& s) {
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

  // --- $ref ---
  const json& resolve(const std::string& ref, const std::string& ptr) {
    if (ref.empty() || ref[0] != '#') {
      fail(ptr, strprintf("only local references (\"#/...\") are supported, not '%s'", ref.c_str()));
    }
    const json* at = &root_;
    size_t i = 1;
    while (i < ref.size()) {
      if (ref[i] != '/') fail(ptr, strprintf("the reference '%s' is not a JSON pointer", ref.c_str()));
      const size_t next = ref.find('/', i + 1);
      std::string token = ref.substr(i + 1, next == std::string::npos ? std::string::npos : next - i - 1);
      std::string unescaped;
      for (size_t k = 0; k < token.size(); ++k) {
        if (token[k] == '~' && k + 1 < token.size() && (token[k + 1] == '0' || token[k + 1] == '1')) {
          unescaped.push_back(token[k + 1] == '0' ? '~' : '/');
          ++k;
        } else {
          unescaped.push_back(token[k]);
        }
      }
      if (at->is_object() && at->contains(unescaped)) {
        at = &(*at)[unescaped];
      } else if (at->is_array() && !unescaped.empty() &&
                 unescaped.find_first_not_of("0123456789") == std::string::npos &&
                 std::stoull(unescaped) < at->size()) {
        at = &(*at)[std::stoull(unescaped)];
      } else {
        fail(ptr, strprintf("the reference '%s' does not resolve in this schema", ref.c_str()));
      }
      i = next == std::string::npos ? ref.size() : next;
    }
    return *at;
  }

  std::string ref_rule(const json& ref_value, const std::string& ptr) {
    if (!ref_value.is_string()) fail(ptr, "'$ref' must be a string");
    const std::string ref = ref_value.get<std::string>();
    if (auto it = ref_rules_.find(ref); it != ref_rules_.end()) return it->second;
    const json& target = resolve(ref, ptr);
    const size_t slash = ref.rfind('/');
    const std::string name = writer_.reserve("ref-" + (slash == std::string::npos ? "root" : ref.substr(slash + 1)));
    ref_rules_[ref] = name;
    writer_.define(name, compile(target, ref.substr(1), name));
    return name;
  }

  // --- allOf / oneOf ---
  json deref(const json& s, const std::string& ptr) {
    const json* at = &s;
    for (int hops = 0; at->is_object() && at->contains("$ref"); ++hops) {
      if (hops > 32) fail(ptr, "a chain of more than 32 $refs");
      if (!(*at)["$ref"].is_string()) fail(ptr, "'$ref' must be a string");
      at = &resolve((*at)["$ref"].get<std::string>(), ptr);
    }
    return *at;
  }

  json merge_all_of(const json& s, const std::string& ptr) {
    if (!s["allOf"].is_array() || s["allOf"].empty()) fail(ptr + "/allOf", "allOf must be a non-empty array");
    json merged = s;
    merged.erase("allOf");
    for (size_t i = 0; i < s["allOf"].size(); ++i) {
      const std::string mptr = ptr + "/allOf/" + std::to_string(i);
      const json member = deref(s["allOf"][i], mptr);
      if (member.is_boolean()) {
        if (!member.get<bool>()) fail(mptr, "the schema is `false`, so no value can match it");
        continue;
      }
      if (!member.is_object()) fail(mptr, "a schema must be an object or a boolean");
      for (const auto& [key, value] : member.items()) {
        if (is_annotation(key)) continue;
        if (key == "allOf" || key == "anyOf" || key == "oneOf") {
          fail(mptr, strprintf("%s inside allOf is not supported; flatten the schemas", key.c_str()));
        }
        if (key == "properties") {
          if (!value.is_object()) fail(mptr + "/properties", "'properties' must be an object");
          for (const auto& [name, sub] : value.items()) {
            if (merged["properties"].contains(name) && merged["properties"][name] != sub) {
              fail(mptr + "/properties/" + pointer_token(name),
                   strprintf("allOf members constrain the property '%s' differently; merge them by hand",
                             name.c_str()));
            }
            merged["properties"][name] = sub;
          }
        } else if (key == "required") {
          json req = merged.value("required", json::array());
          for (const auto& r : value) {
            if (std::find(req.begin(), req.end(), r) == req.end()) req.push_back(r);
          }
          merged["required"] = req;
        } else if (merged.contains(key) && merged[key] != value) {
          fail(mptr + "/" + key, strprintf("allOf members give '%s' different values; merge them by hand", key.c_str()));
        } else {
          merged[key] = value;
        }
      }
    }
    return merged;
  }

  // The JSON types a schema's values can have (integer counts as number), for the oneOf check.
  std::set<std::string> value_types(const json& branch, const std::string& ptr) {
    const json s = deref(branch, ptr);
    std::set<std::string> out;
    if (!s.is_object()) return {kTypes.begin(), kTypes.end()};
    std::vector<json> values;
    if (s.contains("const")) values.push_back(s["const"]);
    if (s.contains("enum") && s["enum"].is_array()) values.insert(values.end(), s["enum"].begin(), s["enum"].end());
    if (!values.empty()) {
      for (const auto& v : values) out.insert(type_of_value(v) == "integer" ? "number" : type_of_value(v));
      return out;
    }
    if (s.contains("anyOf") || s.contains("oneOf")) {
      for (const auto& b : s.contains("anyOf") ? s["anyOf"] : s["oneOf"]) {
        const auto t = value_types(b, ptr);
        out.insert(t.begin(), t.end());
      }
      return out;
    }
    const auto types = declared_types(s, ptr);
    if (types.empty()) return {kTypes.begin(), kTypes.end()};
    for (const auto& t : types) out.insert(t == "integer" ? "number" : t);
    return out;
  }

  // The values a branch's required property `name` may take, when it is pinned by const/enum.
  std::optional<std::vector<json>> pinned_values(const json& branch, const std::string& name, const std::string& ptr) {
    const json s = deref(branch, ptr);
    if (!s.is_object() || !s.contains("properties") || !s.contains("required")) return std::nullopt;
    const json& req = s["required"];
    if (std::find(req.begin(), req.end(), name) == req.end() || !s["properties"].contains(name)) return std::nullopt;
    const json p = deref(s["properties"][name], ptr);
    if (!p.is_object()) return std::nullopt;
    if (p.contains("const")) return std::vector<json>{p["const"]};
    if (p.contains("enum") && p["enum"].is_array()) return std::vector<json>(p["enum"].begin(), p["enum"].end());
    return std::nullopt;
  }

  void check_one_of_disjoint(const json& branches, const std::string& ptr) {
    for (size_t i = 0; i < branches.size(); ++i) {
      for (size_t j = i + 1; j < branches.size(); ++j) {
        const auto ti = value_types(branches[i], ptr), tj = value_types(branches[j], ptr);
        std::vector<std::string> common;
        std::set_intersection(ti.begin(), ti.end(), tj.begin(), tj.end(), std::back_inserter(common));
        if (common.empty()) continue;
        bool told_apart = false;
        if (common == std::vector<std::string>{"object"}) {
          const json bi = deref(branches[i], ptr);
          const json props = bi.is_object() ? bi.value("properties", json::object()) : json::object();
          for (const auto& [name, sub] : props.items()) {
            const auto vi = pinned_values(branches[i], name, ptr), vj = pinned_values(branches[j], name, ptr);
            if (!vi || !vj) continue;
            bool overlap = false;
            for (const auto& v : *vi) overlap = overlap || std::find(vj->begin(), vj->end(), v) != vj->end();
            if (!overlap) {
              told_apart = true;
              break;
            }
          }
        }
        // Const/enum-only branches with disjoint values are exclusive too.
        if (!told_apart) {
          const json bi = deref(branches[i], ptr), bj = deref(branches[j], ptr);
          auto vals = [](const json& b) -> std::optional<std::vector<json>> {
            if (!b.is_object()) return std::nullopt;
            if (b.contains("const")) return std::vector<json>{b["const"]};
            if (b.contains("enum") && b["enum"].is_array()) return std::vector<json>(b["enum"].begin(), b["enum"].end());
            return std::nullopt;
          };
          const auto vi = vals(bi), vj = vals(bj);
          if (vi && vj) {
            bool overlap = false;
            for (const auto& v : *vi) overlap = overlap || std::find(vj->begin(), vj->end(), v) != vj->end();
            told_apart = !overlap;
          }
        }
        if (!told_apart) {
          fail(ptr, strprintf("branches %zu and %zu can match the same value, which a grammar cannot rule out for "
                              "oneOf; use anyOf, or tell the branches apart by type or by a required const property",
                              i, j));
        }
      }
    }
  }

  const json& root_;
  GbnfWriter& writer_;
  std::map<std::string, std::string> ref_rules_;
  std::string ws_, string_, integer_, number_, value_, object_, array_;
  JsonWhitespace whitespace_;
};

}  // namespace

Result<std::string> json_schema_to_gbnf(const nlohmann::ordered_json& schema, JsonWhitespace whitespace) {
  try {
    GbnfWriter writer;
    return SchemaCompiler(schema, writer, whitespace).run();
  } catch (const SchemaError& e) {
    return Error{e.message};
  }
}

Result<std::string> json_schema_to_gbnf(std::string_view schema_text) {
  auto schema = nlohmann::ordered_json::parse(schema_text, nullptr, /*allow_exceptions=*/false);
  if (schema.is_discarded()) return Error{"json_schema: the schema is not valid JSON"};
  return json_schema_to_gbnf(schema);
}

Result<SchemaRules> json_schemas_to_gbnf(const std::vector<nlohmann::ordered_json>& schemas, std::string_view hint,
                                         JsonWhitespace whitespace) {
  GbnfWriter writer;
  SchemaRules out;
  try {
    for (const nlohmann::ordered_json& schema : schemas) {
      out.rule_names.push_back(SchemaCompiler(schema, writer, whitespace).root_rule(std::string(hint)));
    }
  } catch (const SchemaError& e) {
    return Error{e.message};
  }
  out.gbnf = writer.text(out.rule_names.empty() ? "\"\"" : out.rule_names.front());
  return out;
}

std::string json_object_gbnf() {
  GbnfWriter writer;
  return SchemaCompiler(nlohmann::ordered_json::object(), writer).any_object();
}

}  // namespace kairo::grammar
