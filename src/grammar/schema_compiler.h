#pragma once
// Internal to the JSON Schema compiler (json_schema.h is the interface): the recursive compiler of one schema into
// rules of a shared GbnfWriter, split over files by concern (schema_compiler.cpp: dispatch, types, enums, $ref and
// the generic JSON rules; schema_compiler_values.cpp: numbers, strings, arrays, objects;
// schema_compiler_combinators.cpp: allOf merging and the oneOf disjointness check).
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/format.h"
#include "grammar/gbnf_writer.h"
#include "grammar/json_schema.h"
#include "grammar/regex_grammar.h"

namespace kairo::grammar::schema_detail {

// Ordered, so properties keep the order the schema writes them in.
using json = nlohmann::ordered_json;

// Errors unwind the recursive compiler to the functions of json_schema.cpp, which turn them into an Error value;
// nothing outside the compiler sees the exception.
struct SchemaError {
  std::string message;
};

inline const std::set<std::string> kAnnotations = {"title",    "description", "default",  "examples",
                                                   "$schema",  "$id",         "$comment", "deprecated",
                                                   "readOnly", "writeOnly"};
inline const std::set<std::string> kHandled = {
    "type", "enum", "const", "anyOf", "oneOf", "allOf", "$ref", "$defs", "definitions", "properties", "required",
    "additionalProperties", "items", "prefixItems", "minItems", "maxItems", "uniqueItems", "minLength", "maxLength",
    "pattern", "format", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "nullable"};
inline const std::vector<std::string> kTypes = {"null", "boolean", "integer", "number", "string", "array", "object"};

inline bool is_annotation(const std::string& key) {
  return kAnnotations.count(key) || key.rfind("x-", 0) == 0 || key == "$defs" || key == "definitions";
}

inline std::string pointer_token(const std::string& key) {
  std::string out;
  for (char c : key) {
    if (c == '~') out += "~0";
    else if (c == '/') out += "~1";
    else out.push_back(c);
  }
  return out;
}

inline std::string where(const std::string& ptr) { return "#" + ptr; }

[[noreturn]] inline void fail(const std::string& ptr, const std::string& what) {
  throw SchemaError{strprintf("json_schema: %s (at %s)", what.c_str(), where(ptr).c_str())};
}

inline bool value_has_type(const json& v, const std::string& type) {
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

inline std::string type_of_value(const json& v) {
  if (v.is_null()) return "null";
  if (v.is_boolean()) return "boolean";
  if (v.is_string()) return "string";
  if (v.is_array()) return "array";
  if (v.is_object()) return "object";
  return value_has_type(v, "integer") ? "integer" : "number";
}

inline std::string alternatives(const std::vector<std::string>& alts) {
  if (alts.size() == 1) return alts[0];
  std::string out = "(";
  for (size_t i = 0; i < alts.size(); ++i) out += (i ? " | " : "") + alts[i];
  return out + ")";
}

class SchemaCompiler {
 public:
  SchemaCompiler(const json& root, GbnfWriter& writer, JsonWhitespace whitespace = JsonWhitespace::Bounded)
      : root_(root), writer_(writer), whitespace_(whitespace) {}
  std::string run();
  // The schema as one rule of a grammar that other compilers (other roots) share.
  std::string root_rule(const std::string& hint) { return writer_.add_rule(hint, compile(root_, "", hint)); }
  std::string any_object();
 private:
  // --- the generic JSON rules, added on first use ---
  std::string ws();
  std::string json_char() { return any_char_gbnf(writer_, RegexTarget::kJsonString); }
  std::string quote() { return GbnfWriter::literal("\""); }
  std::string generic_string();
  std::string generic_integer();
  std::string number_tail() { return "( \".\" [0-9]{1,16} )? ( [eE] [-+]? [0-9]{1,2} )?"; }
  std::string generic_number();
  std::string boolean() { return writer_.add_rule("boolean", "\"true\" | \"false\""); }
  std::string generic_value();
  std::string generic_object();
  std::string generic_array();
  // --- schemas ---
  std::string compile(const json& s, const std::string& ptr, const std::string& hint);
  // The types the schema allows: "type" (and "nullable"), or inferred from type-specific keywords; empty = any.
  std::vector<std::string> declared_types(const json& s, const std::string& ptr);
  std::string enum_values(const json& s, const std::string& ptr, const std::vector<std::string>& types);
  std::string compile_type(const std::string& type, const json& s, const std::string& ptr, const std::string& hint);
  // --- numbers ---
  std::optional<double> bound(const json& s, const char* key, const std::string& ptr);
  std::string integer(const json& s, const std::string& ptr);
  std::string number(const json& s, const std::string& ptr);
  // --- strings ---
  std::optional<uint32_t> length_bound(const json& s, const char* key, const std::string& ptr);
  static constexpr uint32_t kMaxRepeatLength = 1000;
  std::string string(const json& s, const std::string& ptr);
  // --- arrays ---
  std::string array(const json& s, const std::string& ptr, const std::string& hint);
  // --- objects ---
  std::string object(const json& s, const std::string& ptr, const std::string& hint);
  // A JSON string key that is none of `names`: walks a trie of the names, leaving it at any difference.
  std::string key_excluding(const std::vector<std::string>& names);
  static std::u32string decode(const std::string& s);
  // --- $ref ---
  const json& resolve(const std::string& ref, const std::string& ptr);
  std::string ref_rule(const json& ref_value, const std::string& ptr);
  // --- allOf / oneOf ---
  json deref(const json& s, const std::string& ptr);
  json merge_all_of(const json& s, const std::string& ptr);
  // The JSON types a schema's values can have (integer counts as number), for the oneOf check.
  std::set<std::string> value_types(const json& branch, const std::string& ptr);
  // The values a branch's required property `name` may take, when it is pinned by const/enum.
  std::optional<std::vector<json>> pinned_values(const json& branch, const std::string& name, const std::string& ptr);
  void check_one_of_disjoint(const json& branches, const std::string& ptr);

  const json& root_;
  GbnfWriter& writer_;
  std::map<std::string, std::string> ref_rules_;
  std::string ws_, string_, integer_, number_, value_, object_, array_;
  JsonWhitespace whitespace_;
};

}  // namespace kairo::grammar::schema_detail
