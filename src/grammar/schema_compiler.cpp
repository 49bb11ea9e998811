#include "grammar/schema_compiler.h"

#include <algorithm>

namespace kairo::grammar::schema_detail {

std::string SchemaCompiler::run() {
  const std::string body = compile(root_, "", "value");
  return writer_.text(body);
}

std::string SchemaCompiler::any_object() {
  return writer_.text(generic_object());
}

std::string SchemaCompiler::ws() {
  if (ws_.empty()) {
    ws_ = writer_.add_rule("ws", whitespace_ == JsonWhitespace::Compact ? "\" \"?"
                                                                        : "( \" \" | \"\\n\" [ \\t]{0,20} )?");
  }
  return ws_;
}

std::string SchemaCompiler::generic_string() {
  if (string_.empty()) string_ = writer_.add_rule("string", quote() + " " + json_char() + "* " + quote());
  return string_;
}

std::string SchemaCompiler::generic_integer() {
  if (integer_.empty()) integer_ = writer_.add_rule("integer", "\"-\"? ( \"0\" | [1-9] [0-9]{0,15} )");
  return integer_;
}

std::string SchemaCompiler::generic_number() {
  if (number_.empty()) number_ = writer_.add_rule("number", generic_integer() + " " + number_tail());
  return number_;
}

std::string SchemaCompiler::generic_value() {
  if (value_.empty()) {
    value_ = writer_.reserve("value");
    const std::string body = alternatives({generic_object(), generic_array(), generic_string(), generic_number(),
                                           boolean(), "\"null\""});
    writer_.define(value_, body.substr(1, body.size() - 2));
  }
  return value_;
}

std::string SchemaCompiler::generic_object() {
  if (object_.empty()) {
    object_ = writer_.reserve("object");
    const std::string kv = writer_.add_rule("member", generic_string() + " " + ws() + " \":\" " + ws() + " " +
                                                          generic_value() + " " + ws());
    writer_.define(object_, "\"{\" " + ws() + " ( " + kv + " ( \",\" " + ws() + " " + kv + " )* )? \"}\"");
  }
  return object_;
}

std::string SchemaCompiler::generic_array() {
  if (array_.empty()) {
    array_ = writer_.reserve("array");
    const std::string item = generic_value() + " " + ws();
    writer_.define(array_, "\"[\" " + ws() + " ( " + item + " ( \",\" " + ws() + " " + item + " )* )? \"]\"");
  }
  return array_;
}

std::string SchemaCompiler::compile(const json& s, const std::string& ptr, const std::string& hint) {
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

std::vector<std::string> SchemaCompiler::declared_types(const json& s, const std::string& ptr) {
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

std::string SchemaCompiler::enum_values(const json& s, const std::string& ptr, const std::vector<std::string>& types) {
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

std::string SchemaCompiler::compile_type(const std::string& type, const json& s, const std::string& ptr, const std::string& hint) {
  if (type == "null") return "\"null\"";
  if (type == "boolean") return boolean();
  if (type == "integer") return integer(s, ptr);
  if (type == "number") return number(s, ptr);
  if (type == "string") return string(s, ptr);
  if (type == "array") return writer_.add_rule(hint, array(s, ptr, hint));
  return writer_.add_rule(hint, object(s, ptr, hint));
}

const json& SchemaCompiler::resolve(const std::string& ref, const std::string& ptr) {
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

std::string SchemaCompiler::ref_rule(const json& ref_value, const std::string& ptr) {
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

}  // namespace kairo::grammar::schema_detail
