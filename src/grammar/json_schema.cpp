#include "grammar/json_schema.h"

#include "grammar/schema_compiler.h"

namespace kairo::grammar {

using schema_detail::SchemaCompiler;
using schema_detail::SchemaError;

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
