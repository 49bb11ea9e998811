// Qwen3-Coder's XML tool calls as a grammar. A string parameter is raw text up to "\n</parameter>", so its rule
// is "any text without </parameter> (or </tool_call>) in it": the parser cuts a value at the first closing tag,
// and a value that contained one would be cut short. Other parameters are JSON, from their schemas.
#include <set>

#include "core/format.h"
#include "grammar/gbnf_writer.h"
#include "grammar/json_schema.h"
#include "grammar/text_without.h"
#include "server/tool_call_bodies.h"
#include "server/tool_grammar.h"

namespace kairo::server {
namespace {

using json = nlohmann::ordered_json;
using grammar::GbnfWriter;

// The $defs of a tool's parameters, carried into each property's schema so that its $refs still resolve when it is
// compiled alone.
json with_definitions(json property, const json& parameters) {
  if (!property.is_object()) return property;
  for (const char* key : {"$defs", "definitions"}) {
    if (parameters.contains(key) && !property.contains(key)) property[key] = parameters[key];
  }
  return property;
}

// A raw-text value's rule body, or an error for string constraints raw text cannot carry.
ApiResult<std::string> raw_text_value(const json& schema, const std::string& field) {
  std::vector<std::string> values;
  if (schema.contains("const") && schema["const"].is_string()) values.push_back(schema["const"].get<std::string>());
  if (schema.contains("enum") && schema["enum"].is_array()) {
    for (const json& v : schema["enum"]) {
      if (v.is_string()) values.push_back(v.get<std::string>());
    }
  }
  if (!values.empty()) {
    std::string alts;
    for (const std::string& v : values) alts += (alts.empty() ? "" : " | ") + GbnfWriter::literal(v);
    return "(" + alts + ")";
  }
  for (const char* key : {"pattern", "format"}) {
    if (schema.contains(key)) {
      return invalid_param(field, strprintf("'%s': '%s' cannot be enforced on the raw text of this model's XML tool "
                                            "calls (Qwen3-Coder); drop it or use tool_choice \"auto\"",
                                            field.c_str(), key));
    }
  }
  if (schema.contains("minLength") || schema.contains("maxLength")) {
    const auto bound = [&](const char* key) {
      return schema.contains(key) && schema[key].is_number_integer() ? std::to_string(schema[key].get<int64_t>()) : "";
    };
    const std::string lo = bound("minLength"), hi = bound("maxLength");
    return "[^<]{" + (lo.empty() ? "0" : lo) + "," + hi + "}";  // a bounded value: simply no '<' in it
  }
  return std::string("xml_text");
}

}  // namespace

ApiResult<std::string> xml_tool_call_rules(const std::vector<CallableTool>& tools, bool parallel) {
  // First the JSON-valued parameters of every tool, compiled into one grammar.
  struct Parameter {
    std::string name;
    std::string value;  // rule body; for JSON values filled in after compiling
    bool required = false;
    int json_index = -1;
  };
  std::vector<std::vector<Parameter>> parameters(tools.size());
  std::vector<json> json_schemas;
  for (size_t t = 0; t < tools.size(); ++t) {
    const json& p = tools[t].parameters;
    if (!p.is_object() || !p.contains("properties")) continue;
    std::set<std::string> required;
    if (p.contains("required")) {
      for (const json& r : p["required"]) required.insert(r.get<std::string>());
    }
    for (const auto& [name, schema] : p["properties"].items()) {
      Parameter param{name, "", required.count(name) > 0};
      const std::string field = tools[t].parameters_field + ".properties." + name;
      if (xml_value_is_raw_text(schema)) {
        auto value = raw_text_value(schema, field);
        if (!value.ok()) return value.error();
        param.value = std::move(*value);
      } else {
        param.json_index = static_cast<int>(json_schemas.size());
        json_schemas.push_back(with_definitions(schema, p));
      }
      parameters[t].push_back(std::move(param));
    }
  }
  auto compiled = grammar::json_schemas_to_gbnf(json_schemas, "value", grammar::JsonWhitespace::Compact);
  if (!compiled.ok()) return invalid_param("tools", "'tools': " + compiled.error().message);
  auto text = grammar::text_without_gbnf({markers::kXmlParameterClose, markers::kToolCallClose});
  if (!text.ok()) return api_error(500, text.error().message);
  std::string rules = compiled->gbnf + "xml_text ::= " + *text + "\n";
  std::string any_call;
  for (size_t t = 0; t < tools.size(); ++t) {
    std::string body = GbnfWriter::literal("<tool_call>\n<function=" + tools[t].name + ">\n");
    for (const Parameter& param : parameters[t]) {
      const std::string value = param.json_index >= 0 ? compiled->rule_names[param.json_index] : param.value;
      const std::string one = GbnfWriter::literal("<parameter=" + param.name + ">\n") + " " + value + " " +
                              GbnfWriter::literal("\n</parameter>\n");
      body += " " + (param.required ? one : "(" + one + ")?");
    }
    body += " " + GbnfWriter::literal("</function>\n</tool_call>");
    const std::string rule = strprintf("tool_call_%zu", t);
    rules += rule + " ::= " + body + "\n";
    any_call += (t ? " | " : "") + rule;
  }
  rules += "tool_call ::= " + any_call + "\n";
  rules += std::string(kToolCallsRule) + " ::= " +
           (parallel ? std::string("tool_call (\"\\n\" tool_call)*") : std::string("tool_call")) + "\n";
  return rules;
}

}  // namespace kairo::server
