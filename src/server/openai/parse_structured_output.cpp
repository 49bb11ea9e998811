// Constrained output requests, in the three dialects clients send, turned into one GBNF grammar:
//   OpenAI     response_format {"type": "text" | "json_object" | "json_schema", "json_schema": {name, schema, strict}}
//   vLLM       structured_outputs {json | regex | choice | grammar | json_object} (and the older guided_json,
//              guided_regex, guided_choice, guided_grammar fields)
//   llama.cpp  grammar (GBNF text), json_schema (a schema)
// At most one may be given. A schema keyword the compiler does not support is a 400 naming it and its JSON pointer
// (docs/structured-output.md lists what is supported); nothing is dropped silently.
#include <algorithm>

#include "core/format.h"
#include "grammar/gbnf_writer.h"
#include "grammar/json_schema.h"
#include "grammar/regex_grammar.h"
#include "server/openai/json_fields.h"
#include "server/openai/parse_request.h"

namespace kairo::server {

using json = nlohmann::ordered_json;
using namespace json_fields;

namespace {

constexpr size_t kMaxChoices = 1024;

ApiResult<std::string> from_schema(const json& schema, const std::string& param) {
  if (!schema.is_object() && !schema.is_boolean()) {
    return invalid_param(param, strprintf("'%s' must be a JSON Schema (an object), got %s", param.c_str(),
                                          kind_of(schema)));
  }
  auto gbnf = grammar::json_schema_to_gbnf(schema);
  if (!gbnf.ok()) return invalid_param(param, "'" + param + "': " + gbnf.error().message);
  return *gbnf;
}

ApiResult<std::string> from_regex(const json& pattern, const std::string& param) {
  if (!pattern.is_string()) {
    return invalid_param(param, strprintf("'%s' must be a regular expression (a string), got %s", param.c_str(),
                                          kind_of(pattern)));
  }
  grammar::GbnfWriter writer;
  auto expr = grammar::regex_to_gbnf(pattern.get<std::string>(), writer, grammar::RegexTarget::kRaw,
                                     grammar::RegexAnchoring::kFullMatch);
  if (!expr.ok()) return invalid_param(param, "'" + param + "': " + expr.error().message);
  return writer.text(*expr);
}

ApiResult<std::string> from_choice(const json& choices, const std::string& param) {
  if (!choices.is_array() || choices.empty()) {
    return invalid_param(param, strprintf("'%s' must be a non-empty array of strings, got %s", param.c_str(),
                                          choices.is_array() ? "an empty array" : kind_of(choices)));
  }
  if (choices.size() > kMaxChoices) {
    return invalid_param(param, strprintf("'%s' has %zu choices; at most %zu are accepted", param.c_str(),
                                          choices.size(), kMaxChoices));
  }
  std::string body;
  for (size_t i = 0; i < choices.size(); ++i) {
    if (!choices[i].is_string() || choices[i].get_ref<const std::string&>().empty()) {
      return invalid_param(param, strprintf("'%s[%zu]' must be a non-empty string, got %s", param.c_str(), i,
                                            preview(choices[i]).c_str()));
    }
    body += (i == 0 ? "" : " | ") + grammar::GbnfWriter::literal(choices[i].get<std::string>());
  }
  return grammar::GbnfWriter{}.text(body);
}

ApiResult<std::string> from_gbnf(const json& text, const std::string& param) {
  if (!text.is_string() || text.get_ref<const std::string&>().empty()) {
    return invalid_param(param, strprintf("'%s' must be a GBNF grammar (a non-empty string), got %s", param.c_str(),
                                          preview(text).c_str()));
  }
  return text.get<std::string>();  // compiled (and its errors reported) by the route's grammar cache
}

ApiResult<std::string> from_response_format(const json& rf) {
  if (!rf.is_object() || !rf.contains("type") || !rf["type"].is_string()) {
    return invalid_param("response_format", "'response_format' must be an object with a string 'type': \"text\", "
                                            "\"json_object\" or \"json_schema\"");
  }
  const std::string& type = rf["type"].get_ref<const std::string&>();
  if (type == "text") return std::string();
  if (type == "json_object") return grammar::json_object_gbnf();
  if (type != "json_schema") {
    return invalid_param("response_format.type", strprintf("response_format type %s is not one of \"text\", "
                                                           "\"json_object\", \"json_schema\"",
                                                           quote_for_error(type, 40).c_str()));
  }
  const auto js = rf.find("json_schema");
  if (js == rf.end() || !js->is_object()) {
    return invalid_param("response_format.json_schema", "response_format of type \"json_schema\" needs "
                                                        "'json_schema': {\"name\": ..., \"schema\": {...}}");
  }
  bool strict = true;  // kairo's grammars are always strict: the output validates whatever this says
  if (auto e = get_bool(*js, "strict", "response_format.json_schema.strict", strict)) return *e;
  const auto schema = js->find("schema");
  if (schema == js->end() || schema->is_null()) {
    return invalid_param("response_format.json_schema.schema", "'response_format.json_schema.schema' is required");
  }
  return from_schema(*schema, "response_format.json_schema.schema");
}

struct Source {
  std::string param;
  ApiResult<std::string> (*compile)(const json&, const std::string&);
  const json* value;
};

}  // namespace

ApiResult<std::string> schema_grammar(const json& schema, const std::string& param) { return from_schema(schema, param); }

std::optional<ApiError> parse_structured_output(const json& body, GenerationParams& out) {
  std::vector<Source> given;
  auto add = [&](const json& obj, const char* key, const std::string& param,
                 ApiResult<std::string> (*compile)(const json&, const std::string&)) {
    if (auto it = obj.find(key); it != obj.end() && !it->is_null()) given.push_back({param, compile, &*it});
  };
  std::string response_format_gbnf;
  bool has_response_format = false;
  if (auto it = body.find("response_format"); it != body.end() && !it->is_null()) {
    auto g = from_response_format(*it);
    if (!g.ok()) return g.error();
    response_format_gbnf = *g;
    has_response_format = !response_format_gbnf.empty();
  }
  if (auto it = body.find("structured_outputs"); it != body.end() && !it->is_null()) {
    if (!it->is_object()) {
      return invalid_param("structured_outputs", strprintf("'structured_outputs' must be an object with one of json, "
                                                           "regex, choice, grammar, json_object; got %s",
                                                           kind_of(*it)));
    }
    for (const auto& [key, value] : it->items()) {
      static const char* known[] = {"json", "regex", "choice", "grammar", "json_object"};
      if (std::find(std::begin(known), std::end(known), key) == std::end(known)) {
        return invalid_param("structured_outputs." + key,
                             strprintf("structured_outputs.%s is not supported; give one of json, regex, choice, "
                                       "grammar, json_object",
                                       quote_for_error(key, 40).c_str()));
      }
    }
    add(*it, "json", "structured_outputs.json", [](const json& v, const std::string& p) {
      if (v.is_string()) {  // vLLM accepts the schema as a JSON string too
        const json parsed = json::parse(v.get<std::string>(), nullptr, /*allow_exceptions=*/false);
        if (parsed.is_discarded()) return ApiResult<std::string>(invalid_param(p, "'" + p + "' is a string that is not JSON"));
        return from_schema(parsed, p);
      }
      return from_schema(v, p);
    });
    add(*it, "regex", "structured_outputs.regex", from_regex);
    add(*it, "choice", "structured_outputs.choice", from_choice);
    add(*it, "grammar", "structured_outputs.grammar", from_gbnf);
    if (auto jo = it->find("json_object"); jo != it->end() && !jo->is_null()) {
      if (!jo->is_boolean()) return invalid_param("structured_outputs.json_object", "'json_object' must be a boolean");
      if (jo->get<bool>()) {
        given.push_back({"structured_outputs.json_object",
                         [](const json&, const std::string&) { return ApiResult<std::string>(grammar::json_object_gbnf()); },
                         &*jo});
      }
    }
  }
  add(body, "guided_json", "guided_json", from_schema);
  add(body, "guided_regex", "guided_regex", from_regex);
  add(body, "guided_choice", "guided_choice", from_choice);
  add(body, "guided_grammar", "guided_grammar", from_gbnf);
  add(body, "json_schema", "json_schema", from_schema);
  add(body, "grammar", "grammar", from_gbnf);

  const size_t n_given = given.size() + (has_response_format ? 1 : 0);
  if (n_given > 1) {
    std::string names = has_response_format ? "response_format" : "";
    for (const Source& s : given) names += (names.empty() ? "" : ", ") + s.param;
    return invalid_param(given.back().param, "give one output constraint, not several: " + names);
  }
  if (has_response_format) {
    out.grammar = std::move(response_format_gbnf);
    out.grammar_param = "response_format";
    return std::nullopt;
  }
  if (given.empty()) return std::nullopt;
  auto gbnf = given[0].compile(*given[0].value, given[0].param);
  if (!gbnf.ok()) return gbnf.error();
  out.grammar = std::move(*gbnf);
  out.grammar_param = given[0].param;
  return std::nullopt;
}

}  // namespace kairo::server
